import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import type { PolicyRule } from "./types";
import { REPLAY } from "../regions/testFixtures";

function rule(overrides: Partial<PolicyRule> = {}): PolicyRule {
  return {
    id: "r-1",
    revision: 3,
    name: "Only summaries/",
    order: 10,
    effect: "require_review",
    reason: "writing outside summaries/ is checked by a person",
    enabled: true,
    scope: { workflow_id: null, user: null },
    match: { tool: "file.write", path_outside: "summaries/" },
    ...overrides,
  };
}

const allowFiles = rule({ id: "r-2", name: "File tools run", order: 20, effect: "allow", reason: "files are ours", match: { tool: "file.*" } });
const DEFAULTS = { read: "allow", write: "allow", external: "allow", destructive: "require_review" };

async function openPolicies(handler: (call: RecordedCall) => Response | undefined = () => undefined, session = testSession) {
  const { calls } = stubSignedInFetch((call) => {
    const answer = handler(call);
    if (answer) return answer;
    if (call.url === "/api/policies" && call.method === "GET") return jsonResponse({ items: [rule(), allowFiles], revision: 3 });
    if (call.url === "/api/policies/default") return jsonResponse(DEFAULTS);
    if (call.url.startsWith("/api/metrics/workflows")) return jsonResponse({ items: [{ workflow_id: "wf-1", name: "Quarterly report" }] });
    return jsonResponse({});
  }, session);
  renderApp("/policies");
  await screen.findByRole("table", { name: "Rules in precedence order" });
  return { calls, user: userEvent.setup() };
}

describe("PoliciesPage", () => {
  it("lists the rules in precedence order with scope, effect, reason and what they match", async () => {
    await openPolicies();
    const rows = within(screen.getByRole("table", { name: "Rules in precedence order" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("Only summaries/");
    expect(rows[1]).toHaveTextContent("writing outside summaries/ is checked by a person");
    expect(rows[1]).toHaveTextContent("workspace");
    expect(rows[1]).toHaveTextContent("Needs review");
    expect(rows[1]).toHaveTextContent("tool file.write · path outside summaries/");
    expect(rows[2]).toHaveTextContent("Allowed");
    expect(screen.getByRole("button", { name: "Move Only summaries/ up" })).toBeDisabled();
    expect(screen.getByRole("link", { name: "Policies" })).toHaveAttribute("aria-current", "page");
  });

  it("puts the server's 422 on the fields it names, and the others above the buttons", async () => {
    const { calls, user } = await openPolicies((call) =>
      call.url === "/api/policies" && call.method === "POST"
        ? errorResponse(422, "validation_failed", "the rule does not compile", {
            "match.params": ["unknown name 'parms'"],
            effect: ["must be one of allow, require_review, deny"],
            "match.colour": ["unknown match key"],
          })
        : undefined,
    );
    await user.click(screen.getByRole("button", { name: "New rule" }));
    const form = screen.getByRole("form", { name: "New rule" });
    await user.click(within(form).getByRole("button", { name: "Create the rule" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("Name: Give the rule a name.");
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);

    await user.type(within(form).getByLabelText("Name"), "Big payments");
    await user.type(within(form).getByLabelText("Tool", { exact: true }), "http.request, sql.*");
    await user.click(within(form).getByRole("checkbox", { name: "write" }));
    await user.type(within(form).getByLabelText("Params predicate"), "parms.amount > 1000");
    await user.click(within(form).getByRole("button", { name: "Create the rule" }));

    await waitFor(() => expect(within(form).getByLabelText("Params predicate")).toHaveAttribute("aria-invalid", "true"));
    const sent = calls.find((c) => c.method === "POST")!;
    expect(sent.body).toEqual({
      name: "Big payments",
      effect: "require_review",
      reason: "",
      order: 10,
      enabled: true,
      scope: { workflow_id: null, user: null },
      match: { tool: ["http.request", "sql.*"], risk: ["write"], params: "parms.amount > 1000" },
    });
    expect(within(form).getByText(/Params predicate: unknown name 'parms'/)).toBeInTheDocument();
    expect(within(form).getByLabelText("Effect")).toHaveAttribute("aria-invalid", "true");
    expect(within(form).getByText(/Effect: must be one of/)).toBeInTheDocument();
    expect(within(form).getByText("The server refused the rule:").closest("div")).toHaveTextContent("match.colour: unknown match key");
  });

  it("replays the rule being written before it is saved, and puts the server's 422 on the rule's fields", async () => {
    let refuse = false;
    const { calls, user } = await openPolicies((call) =>
      call.url === "/api/policies/replay"
        ? refuse
          ? errorResponse(422, "validation_failed", "the rule does not compile", { "rule.match.params": ["unknown name 'parms'"] })
          : jsonResponse({ ...REPLAY, in_region: undefined, condition_failed: undefined, matched: 4, changed: 3,
                           effects: { allow: 6, require_review: 4 }, rule_failed: { calls: 0, first_error: null } })
        : undefined,
    );
    await user.click(screen.getByRole("button", { name: "New rule" }));
    const form = screen.getByRole("form", { name: "New rule" });
    await user.type(within(form).getByLabelText("Name"), "Big refunds");
    await user.type(within(form).getByLabelText("Params predicate"), "params.amount > 200");
    await user.selectOptions(within(form).getByLabelText("Replay over"), "A workflow (or one step of it)");
    await user.selectOptions(within(form).getByLabelText("Workflow", { exact: true }), "Quarterly report");
    await user.type(within(form).getByLabelText("Step id"), "refund");
    await user.click(within(form).getByRole("button", { name: "Replay" }));
    const table = await within(form).findByRole("table", { name: /Replay of the rule Big refunds/ });
    expect(within(table).getAllByRole("row")[3]).toHaveTextContent(/Still asked\s*4/);
    expect(form).toHaveTextContent("the rule decides 4 and changes the outcome of 3");
    expect(within(form).getByRole("link", { name: "execution ex-7" })).toHaveAttribute("href", "/executions/ex-7");
    const sent = calls.find((c) => c.url === "/api/policies/replay")!;
    expect(sent.body).toMatchObject({
      workflow_id: "wf-1", step_id: "refund",
      rule: { name: "Big refunds", effect: "require_review", match: { params: "params.amount > 200" } },
    });
    expect(calls.filter((c) => c.url === "/api/policies" && c.method === "POST")).toHaveLength(0); // nothing saved

    refuse = true;
    await user.click(within(form).getByRole("button", { name: "Replay" }));
    const params = within(form).getByLabelText("Params predicate");
    await waitFor(() => expect(params).toHaveAttribute("aria-invalid", "true"));
    expect(within(form).getByText(/Params predicate: unknown name 'parms'/)).toBeInTheDocument();
    expect(params).toHaveFocus();
  });

  it("moves a rule up by swapping the orders with its neighbour", async () => {
    const { calls, user } = await openPolicies((call) => (call.method === "PUT" ? jsonResponse({}) : undefined));
    await user.click(screen.getByRole("button", { name: "Move File tools run up" }));
    await waitFor(() => expect(calls.filter((c) => c.method === "PUT")).toHaveLength(2));
    const [first, second] = calls.filter((c) => c.method === "PUT");
    expect(first.url).toBe("/api/policies/r-2");
    expect(first.body).toMatchObject({ name: "File tools run", order: 10 });
    expect(second.url).toBe("/api/policies/r-1");
    expect(second.body).toMatchObject({ name: "Only summaries/", order: 20 });
    expect(first.body).not.toHaveProperty("id");
  });

  it("deletes a rule only once confirmed", async () => {
    const { calls, user } = await openPolicies((call) => (call.method === "DELETE" ? new Response(null, { status: 204 }) : undefined));
    await user.click(screen.getByRole("button", { name: "Delete File tools run" }));
    const dialog = screen.getByRole("dialog");
    expect(dialog).toHaveTextContent("Delete the rule “File tools run”?");
    await user.click(within(dialog).getByRole("button", { name: "Delete the rule" }));
    await waitFor(() => expect(calls.some((c) => c.method === "DELETE" && c.url === "/api/policies/r-2")).toBe(true));
  });

  it("dry-runs a call and shows the explanation: effect, deciding rule, and the rules that lost with why", async () => {
    const { calls, user } = await openPolicies((call) =>
      call.url === "/api/policies/evaluate"
        ? jsonResponse({
            effect: "require_review",
            default: false,
            rule: { id: "r-1", name: "Only summaries/", scope: "workspace", order: 10, reason: "writing outside summaries/ is checked by a person" },
            matched: [{ id: "r-2", name: "File tools run", scope: "workspace", order: 20, reason: "", effect: "allow", lost_because: "later order" }],
            risk: "write",
          })
        : undefined,
    );
    const form = screen.getByRole("form", { name: "Dry run" });
    await user.click(within(form).getByRole("button", { name: "Judge this call" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("Tool: Name the tool");
    await user.type(within(form).getByLabelText("Tool"), "file.write");
    const params = within(form).getByLabelText("Params (JSON)");
    await user.clear(params);
    await user.paste('{"path": "report.txt"}');
    await user.selectOptions(within(form).getByLabelText("Workflow"), "wf-1");
    await user.click(within(form).getByRole("button", { name: "Judge this call" }));

    const verdict = await screen.findByTestId("policy-verdict");
    expect(calls.find((c) => c.url === "/api/policies/evaluate")!.body).toEqual({
      tool: "file.write", params: { path: "report.txt" }, step_type: "action", workflow_id: "wf-1", user: null, agent_step: null,
    });
    expect(verdict).toHaveTextContent("Needs review");
    expect(verdict).toHaveTextContent("Rule Only summaries/ (workspace rule, order 10): writing outside summaries/ is checked by a person");
    expect(verdict).toHaveTextContent("File tools run");
    expect(verdict).toHaveTextContent("lost because: later order");
  });

  it("is read-only for an operator, with no dry run", async () => {
    await openPolicies(undefined, { ...testSession, workspace_id: "2" });
    expect(screen.queryByRole("button", { name: "New rule" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Move/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Dry run" })).not.toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "Policies" })).not.toBeInTheDocument();
  });
});
