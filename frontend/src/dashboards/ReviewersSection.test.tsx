import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, renderPage, stubFetch, type RecordedCall } from "../test/utils";
import type { Reviewers, ReviewFloor } from "./queries";
import { checkFloor, ReviewersSection, scopeLabel } from "./ReviewersSection";

const noChecks = { checks: 0, catches: 0, misses: 0, catch_rate: null, accepts: 0, fast_accepts: 0, fast_accept_share: null, attentive: false };
const ann = {
  operator: "ann@example.com",
  decisions: 4,
  accepts: 3,
  median_ms: 2200,
  p90_ms: 5000,
  fast_accepts: 2,
  fast_accept_share: 0.6667,
  checks: { ...noChecks, checks: 5, catches: 4, misses: 1, catch_rate: 0.8, attentive: true },
};
const bob = {
  operator: "bob@example.com",
  decisions: 2,
  accepts: 1,
  median_ms: 4100,
  p90_ms: 7000,
  fast_accepts: 0,
  fast_accept_share: 0,
  checks: { ...noChecks, checks: 2, catches: 0, misses: 2, catch_rate: 0 },
};
const cy = { operator: "cy@example.com", decisions: 1, accepts: 0, median_ms: 300, p90_ms: 300, fast_accepts: 0, fast_accept_share: null, checks: noChecks };

function reviewers(overrides: Partial<Reviewers> = {}): Reviewers {
  return {
    workflow_id: "wf-1",
    step_id: null,
    days: 30,
    since: "2026-10-29T09:00:00+00:00",
    floor_ms: 1500,
    scopes: ["fetch", "agent", "agent:echo"],
    decisions: 7,
    evidence_from: "all",
    items: [ann, bob, cy],
    ...overrides,
  };
}

const floor: ReviewFloor = {
  attentive_floor_ms: 1500,
  default_ms: 1500,
  min_ms: 100,
  max_ms: 600000,
  workspace: false,
  check_rate: 0,
  evidence_from: "all",
  min_checks: 5,
  min_catch_rate: 0.8,
  max_fast_share: 0.5,
};

function stub(override: (call: RecordedCall) => Response | undefined = () => undefined) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === "/api/metrics/workflows/wf-1/reviewers") return jsonResponse(reviewers());
    if (call.url === "/api/metrics/workflows/wf-1/reviewers?step_id=agent%3Aecho")
      return jsonResponse(reviewers({ step_id: "agent:echo", decisions: 1, items: [{ ...bob, decisions: 1 }] }));
    if (call.url === "/api/workspace/reviews" && call.method === "GET") return jsonResponse(floor);
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const renderSection = () =>
  renderPage(<ReviewersSection workflowId="wf-1" workflowName="Invoice intake" canSetFloor />, { route: "/w", path: "/w" });

describe("ReviewersSection", () => {
  it("shows each operator's time to decide and flags their fast accepts in words", async () => {
    stub();
    renderSection();
    const table = await screen.findByRole("table");
    const region = screen.getByRole("region", { name: "Reviewers of Invoice intake: time to decide and fast accepts" });
    expect(region).toHaveAttribute("tabindex", "0"); // a wide table scrolls with the keyboard
    expect(screen.getByText(/7 decisions in the last 30 days/)).toHaveTextContent("floor 1.5 s");
    const rows = within(table).getAllByRole("row");
    expect(within(rows[0]).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Operator",
      "Decisions",
      "Accepts",
      "Median to decide",
      "90th percentile to decide",
      "Fast accepts",
      "Checks workspace-wide",
    ]);
    expect(within(rows[1]).getByRole("rowheader")).toHaveTextContent("ann@example.com");
    expect(rows[1]).toHaveTextContent("ann@example.com432.2 s5.0 s");
    expect(rows[1]).toHaveTextContent("Flagged 2 of 3 accepts (67%) faster than 1.5 s");
    expect(rows[2]).toHaveTextContent("none of 1 accept faster than 1.5 s");
    expect(rows[2]).not.toHaveTextContent("Flagged");
    expect(rows[3]).toHaveTextContent("no accept");
  });

  it("says each operator's checks caught and missed, and whether they are attentive, in words", async () => {
    stub((call) =>
      call.url === "/api/metrics/workflows/wf-1/reviewers" ? jsonResponse(reviewers({ evidence_from: "attentive" })) : undefined,
    );
    renderSection();
    const table = await screen.findByRole("table");
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("caught 4 of 5 checks (80%); missed 1");
    expect(within(rows[1]).getByText("Attentive")).toHaveAttribute("data-attentive", "true");
    expect(rows[2]).toHaveTextContent("caught 0 of 2 checks (0%); missed 2");
    expect(within(rows[2]).getByText("Not attentive")).toHaveAttribute("data-attentive", "false");
    expect(rows[3]).toHaveTextContent("no check yet");
    expect(screen.getByText(/7 decisions in the last 30 days/)).toHaveTextContent(
      "Only attentive reviewers' decisions count in the readiness evidence.",
    );
  });

  it("reads one step's or one agent tool's reviewers from the scope chosen with the keyboard", async () => {
    const user = userEvent.setup();
    const { calls } = stub();
    renderSection();
    const scope = await screen.findByLabelText("Decisions of");
    expect(within(scope).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "all steps",
      "step fetch",
      "step agent",
      "tool echo of agent step agent",
    ]);
    scope.focus();
    await user.selectOptions(scope, "tool echo of agent step agent");
    expect(await screen.findByText(/1 decision in the last 30 days of tool echo of agent step agent/)).toBeInTheDocument();
    expect(calls.some((c) => c.url === "/api/metrics/workflows/wf-1/reviewers?step_id=agent%3Aecho")).toBe(true);
    expect(screen.getAllByRole("row")).toHaveLength(2);
  });

  it("lets a lead set the floor with the keyboard and reads the figures again", async () => {
    const user = userEvent.setup();
    let saved = 1500;
    const { calls } = stub((call) => {
      if (call.url === "/api/workspace/reviews" && call.method === "PUT") {
        saved = (call.body as { attentive_floor_ms: number }).attentive_floor_ms;
        return jsonResponse({ ...floor, attentive_floor_ms: saved, workspace: true });
      }
      if (call.url === "/api/metrics/workflows/wf-1/reviewers") return jsonResponse(reviewers({ floor_ms: saved }));
      return undefined;
    });
    renderSection();
    const input = await screen.findByLabelText("Floor for fast accepts (milliseconds)");
    expect(input).toHaveValue("1500");
    await user.click(input);
    await user.clear(input);
    await user.type(input, "3000{Enter}");
    expect(await screen.findByText("Floor saved: an accept faster than 3.0 s counts as fast.")).toBeInTheDocument();
    expect(calls.find((c) => c.method === "PUT")?.body).toEqual({ attentive_floor_ms: 3000 });
    await waitFor(() => expect(screen.getByText(/7 decisions in the last 30 days/)).toHaveTextContent("floor 3.0 s"));
    // set by the workspace: the default is one button away, reached with Tab
    await user.tab();
    await user.tab();
    expect(screen.getByRole("button", { name: "Use the default (1.5 s)" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(calls.filter((c) => c.method === "PUT").at(-1)?.body).toEqual({ attentive_floor_ms: null });
  });

  it("refuses a floor out of bounds before sending, and shows the server's 422 on the field", async () => {
    const user = userEvent.setup();
    const { calls } = stub((call) =>
      call.method === "PUT"
        ? errorResponse(422, "validation_failed", "request is invalid", { json: { attentive_floor_ms: ["Must be greater than or equal to 100."] } })
        : undefined,
    );
    renderSection();
    const input = await screen.findByLabelText("Floor for fast accepts (milliseconds)");
    await user.clear(input);
    await user.type(input, "50");
    await user.click(screen.getByRole("button", { name: "Save floor" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Floor: must be between 100 and 600000 milliseconds");
    expect(input).toHaveAttribute("aria-invalid", "true");
    expect(calls.filter((c) => c.method === "PUT")).toHaveLength(0);

    await user.clear(input);
    await user.type(input, "200");
    await user.click(screen.getByRole("button", { name: "Save floor" }));
    expect(await screen.findByText("Floor: Must be greater than or equal to 100.")).toBeInTheDocument();
  });

  it("says who may see it when the server answers 403, and says so when nobody decided yet", async () => {
    stub((call) => (call.url.includes("/reviewers") ? errorResponse(403, "forbidden", "this needs the lead role") : undefined));
    const { unmount } = renderSection();
    expect(await screen.findByText("Leads only")).toBeInTheDocument();
    unmount();
    stub((call) => (call.url.includes("/reviewers") ? jsonResponse(reviewers({ items: [], decisions: 0 })) : undefined));
    renderSection();
    expect(await screen.findByText("Nobody has decided a suggestion here yet.")).toBeInTheDocument();
  });

  it("checks the floor as the server does and names scopes in words", () => {
    expect(checkFloor("1500")).toEqual({ value: 1500 });
    expect(checkFloor("100").value).toBe(100);
    expect(checkFloor("600000").value).toBe(600000);
    for (const bad of ["", "99", "600001", "1500.5", "abc", "-1"]) expect(checkFloor(bad).problem).toBeTruthy();
    expect(scopeLabel("fetch")).toBe("step fetch");
    expect(scopeLabel("agent:mcp:tool")).toBe("tool mcp:tool of agent step agent");
  });
});
