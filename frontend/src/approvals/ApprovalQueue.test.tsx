import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import type { Approval } from "./types";

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

function approval(overrides: Partial<Approval> = {}): Approval {
  return {
    approval_id: "ap-1",
    execution_id: "ex-9",
    agent: null,
    step_id: "write",
    kind: "tool_call",
    status: "pending",
    message: "Review the call of file.write: writing outside summaries/ is checked by a person",
    tool: "file.write",
    params: { path: "report.txt", content: "figures" },
    policy: {
      effect: "require_review",
      default: false,
      rule: { id: "r-1", name: "Only summaries/", scope: "workspace", order: 10, reason: "writing outside summaries/ is checked by a person" },
      matched: [],
      risk: "write",
    },
    approvers: { roles: ["lead"], users: [] },
    quorum: 2,
    approvals: 1,
    separate_duties: false,
    started_by: "3",
    decisions: [{ user: "bo@example.com", decision: "approve", comment: "", at: minutesAgo(1) }],
    deadline: new Date(Date.now() + 30 * 60_000).toISOString(),
    timeout_s: 3600,
    on_timeout: "reject",
    created_at: minutesAgo(3),
    decided_at: null,
    ...overrides,
  };
}

const page = (items: Approval[]) => ({ items, total: items.length, page: 1, per_page: 100 });

async function openQueue(
  approvals: () => Approval[],
  decide: (call: RecordedCall) => Response = (call) =>
    jsonResponse({ approval: { ...approvals()[0], status: (call.body as { decision: string }).decision === "reject" ? "rejected" : "approved" } }),
) {
  const { calls } = stubSignedInFetch((call) => {
    if (call.url.startsWith("/api/approvals?")) return jsonResponse(page(approvals()));
    if (call.url.startsWith("/api/approvals/") && call.method === "POST") return decide(call);
    if (call.url.startsWith("/api/coaching/queue")) return jsonResponse({ items: [], total: 0, page: 1, per_page: 50 });
    return jsonResponse({});
  });
  renderApp("/queue");
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  await screen.findByRole("listbox", { name: "Pending approvals" });
  return { calls, user: userEvent.setup() };
}

const decisions = (calls: RecordedCall[]) => calls.filter((c) => c.method === "POST" && c.url.startsWith("/api/approvals/"));

describe("approvals in the queue", () => {
  it("shows what is asked, the call, the policy rule, the quorum so far and the deadline", async () => {
    await openQueue(() => [approval()]);
    const card = screen.getByRole("region", { name: "Tool call review: write" });
    expect(card).toHaveTextContent("writing outside summaries/ is checked by a person");
    expect(within(card).getByTestId("approval-params")).toHaveTextContent('"path": "report.txt"');
    expect(within(card).getByTestId("policy-verdict")).toHaveTextContent("Needs review");
    expect(within(card).getByTestId("policy-verdict")).toHaveTextContent("Rule Only summaries/");
    expect(within(card).getByTestId("approval-quorum")).toHaveTextContent("1 of 2 approvals — approved by bo@example.com");
    expect(card).toHaveTextContent(/in 30 min\) — then it is rejected/);
    expect(screen.getByText(/1 approval for you/)).toBeInTheDocument();
    // the list says when it is due, not "deadline" beside the approval's age ("deadline just now")
    const option = within(screen.getByRole("listbox", { name: "Pending approvals" })).getByRole("option");
    expect(option).toHaveTextContent("due in 30 min");
    expect(option.querySelector("svg[data-icon=clock]")).not.toBeNull(); // drawn: Debian has no ⏱ glyph
  });

  it("shows an outside agent's call held by the MCP gateway, with the agent instead of an execution, and edits it", async () => {
    const held = approval({
      approval_id: "ap-g", execution_id: null, agent: "claude-code", kind: "gateway", step_id: "orders.refund",
      tool: "orders.refund", params: { order_id: "A-1", amount: 5 }, message: "Agent claude-code calls orders.refund",
      quorum: 1, approvals: 0, decisions: [], deadline: null, started_by: null,
    });
    const { calls, user } = await openQueue(() => [held]);
    const card = screen.getByRole("region", { name: "Agent call (MCP gateway): orders.refund" });
    expect(within(card).getByTestId("approval-agent")).toHaveTextContent("claude-code");
    expect(within(card).queryByText("Execution")).toBeNull();
    const option = within(screen.getByRole("listbox", { name: "Pending approvals" })).getByRole("option");
    expect(option).toHaveTextContent("agent claude-code");
    await user.keyboard("e");
    const dialog = await screen.findByRole("dialog");
    const field = within(dialog).getByLabelText("Params (JSON)");
    await user.clear(field);
    await user.paste('{"order_id": "A-1", "amount": 2}');
    await user.click(within(dialog).getByRole("button", { name: "Approve with these params" }));
    await waitFor(() => expect(decisions(calls)).toHaveLength(1));
    expect(decisions(calls)[0].url).toBe("/api/approvals/ap-g");
    expect(decisions(calls)[0].body).toEqual({ decision: "edit", comment: null, params: { order_id: "A-1", amount: 2 } });
  });

  it("says in the list when an approval's deadline has passed", async () => {
    await openQueue(() => [{ ...approval(), deadline: new Date(Date.now() - 60_000).toISOString() }]);
    const option = within(screen.getByRole("listbox", { name: "Pending approvals" })).getByRole("option");
    expect(option).toHaveTextContent("deadline passed");
  });

  it("approves the selected approval with a, confirmed with Enter (the policy flagged the call)", async () => {
    const { calls, user } = await openQueue(() => [approval()]);
    await user.keyboard("a");
    expect(screen.getByTestId("confirm-prompt")).toHaveTextContent(/^Press Enter to approve: Review the call of file.write/);
    expect(decisions(calls)).toHaveLength(0);
    expect(screen.getByRole("button", { name: "Confirm approve Enter" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("confirm-prompt")).toBeNull();
    // a click arms it too, and a click on the armed button confirms
    await user.click(screen.getByRole("button", { name: "Approve a then Enter" }));
    expect(decisions(calls)).toHaveLength(0);
    await user.click(screen.getByRole("button", { name: "Confirm approve Enter" }));
    await waitFor(() => expect(decisions(calls)).toHaveLength(1));
    expect(decisions(calls)[0].url).toBe("/api/approvals/ap-1");
    expect(decisions(calls)[0].body).toEqual({ decision: "approve", comment: null });
    expect((decisions(calls)[0].init?.headers as Record<string, string>)["Idempotency-Key"]).toBeTruthy();
    expect(await screen.findByText(/Approved: Review the call of file.write/)).toBeInTheDocument();
  });

  it("says what it approved without doubling the message's own question mark", async () => {
    const { user } = await openQueue(() => [approval({ message: "Pay 1840 to Acme Paper Ltd for INV-7731?" })]);
    await user.keyboard("a");
    await user.keyboard("{Enter}");
    expect(await screen.findByText(/^Approved: /)).toHaveTextContent("Approved: Pay 1840 to Acme Paper Ltd for INV-7731.");
    expect(screen.queryByText(/INV-7731\?\./)).toBeNull();
  });

  it("asks for a comment before rejecting with r, and sends it", async () => {
    const { calls, user } = await openQueue(() => [approval()]);
    await user.keyboard("r");
    const dialog = await screen.findByRole("dialog");
    await user.click(within(dialog).getByRole("button", { name: "Reject with comment" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Write why");
    expect(decisions(calls)).toHaveLength(0);
    await user.type(within(dialog).getByLabelText("Why do you reject it?"), "not before the audit");
    await user.click(within(dialog).getByRole("button", { name: "Reject with comment" }));
    await waitFor(() => expect(decisions(calls)).toHaveLength(1));
    expect(decisions(calls)[0].body).toEqual({ decision: "reject", comment: "not before the audit" });
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  });

  it("edits a tool call's params with e, shows the server's 422 on the fields and keeps the dialog open", async () => {
    let answer: Response = errorResponse(422, "validation_failed", "params do not fit the tool", {
      "params.path": ["5 is not of type 'string'"],
    });
    const { calls, user } = await openQueue(() => [approval()], () => answer);
    await user.keyboard("e");
    const dialog = await screen.findByRole("dialog");
    const field = within(dialog).getByLabelText("Params (JSON)");
    await user.clear(field);
    await user.paste("[1");
    await user.click(within(dialog).getByRole("button", { name: "Approve with these params" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Not valid JSON");
    expect(decisions(calls)).toHaveLength(0);

    await user.clear(field);
    await user.paste('{"path": 5, "content": "x"}');
    await user.click(within(dialog).getByRole("button", { name: "Approve with these params" }));
    expect(await within(dialog).findByTestId("edit-errors")).toHaveTextContent("params.path: 5 is not of type 'string'");
    expect(decisions(calls)[0].body).toEqual({ decision: "edit", comment: null, params: { path: 5, content: "x" } });
    expect(screen.getByRole("dialog")).toBeInTheDocument();

    answer = jsonResponse({ approval: { ...approval(), status: "approved" } });
    await user.clear(field);
    await user.paste('{"path": "reports/q3.txt", "content": "x"}');
    await user.click(within(dialog).getByRole("button", { name: "Approve with these params" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(decisions(calls)[1].body).toMatchObject({ decision: "edit", params: { path: "reports/q3.txt" } });
  });

  it("says clearly when the server refuses: 403 not an approver, 409 already decided", async () => {
    let answer = errorResponse(403, "forbidden", "separation of duties: you started this execution, so someone else must approve it");
    const { user } = await openQueue(() => [approval()], () => answer);
    await user.keyboard("a{Enter}");
    expect(await screen.findByRole("alert")).toHaveTextContent(
      "You may not decide this approval: separation of duties: you started this execution",
    );
    answer = errorResponse(409, "conflict", "this approval is already approved", { status: "approved" });
    await user.keyboard("a{Enter}");
    await waitFor(() => expect(screen.getByRole("alert")).toHaveTextContent("Not applied — this approval is already approved"));
  });

  it("keeps approvals that others must decide apart, with why", async () => {
    const mine = approval({ approval_id: "ap-1" });
    const decided = approval({
      approval_id: "ap-2",
      message: "Pay 1200?",
      kind: "step",
      tool: null,
      decisions: [{ user: "ada@example.com", decision: "approve", comment: "", at: minutesAgo(1) }],
    });
    await openQueue(() => [mine, decided]);
    expect(within(screen.getByRole("listbox", { name: "Pending approvals" })).getAllByRole("option")).toHaveLength(1);
    expect(screen.getByText("1 more approval waits for other people")).toBeInTheDocument();
    expect(screen.getByText(/Pay 1200\?/).closest("li")).toHaveTextContent("You already decided (approve)");
  });

  it("updates live: approval_requested adds one, approval_decided removes it", async () => {
    let items = [approval()];
    await openQueue(() => items);
    const options = () => within(screen.getByRole("listbox", { name: "Pending approvals" })).getAllByRole("option");
    expect(options()).toHaveLength(1);

    const second = approval({ approval_id: "ap-2", message: "Pay 1200?", kind: "step", tool: null, decisions: [], approvals: 0 });
    items = [second, approval()];
    await act(async () => lastSocket().push("approval_requested", second));
    await waitFor(() => expect(options()).toHaveLength(2));
    expect(options()[0]).toHaveTextContent("Pay 1200?");

    items = [second];
    await act(async () => lastSocket().push("approval_decided", { ...approval(), status: "approved" }));
    await waitFor(() => expect(options()).toHaveLength(1));
    expect(options()[0]).toHaveTextContent("Pay 1200?");
  });

  it("moves one selection through approvals and suggestions with j and k", async () => {
    const { user } = await openQueue(() => [approval(), approval({ approval_id: "ap-2", message: "Second", decisions: [] })]);
    const options = () => within(screen.getByRole("listbox", { name: "Pending approvals" })).getAllByRole("option");
    expect(options()[0]).toHaveAttribute("aria-selected", "true");
    await user.keyboard("j");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
    expect(screen.getByRole("region", { name: "Tool call review: write" })).toHaveTextContent("Second");
  });
});
