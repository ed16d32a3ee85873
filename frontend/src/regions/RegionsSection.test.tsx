import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderLive } from "../dashboards/testFixtures";
import { errorResponse, jsonResponse, stubFetch, type RecordedCall } from "../test/utils";
import type { Proposal, Region, RegionList } from "./api";
import { REPLAY } from "./testFixtures";
import { RegionsSection } from "./RegionsSection";

function region(over: Partial<Region> = {}): Region {
  return {
    id: "r-1", name: "small refunds", when: "params.amount <= 200", order: 0, mode: "coaching", scope: "step",
    workflow_id: "wf-1", step_id: "refund", created_at: "2026-11-01T09:00:00+00:00",
    updated_at: "2026-11-01T09:00:00+00:00", decisions: 4, acceptance: 1, e_value: 3.2, threshold: 8.22,
    auto_ready: false, decisions_needed: 3, level: "OBSERVATION", alpha_share: 0.1216, scope_alpha: 0.2,
    condition_version: 1, spot_checks: { decisions: 0, acceptance: 0 }, ...over,
  };
}

const PROPOSAL: Proposal = {
  when: "params.amount <= 250", explanation: "refund calls with amount ≤ 250: 30 of 30 accepted", params: ["amount"],
  decisions: 30, accepted: 30, coverage: 0.6, acceptance: 1, lower_bound: 0.886, upper_bound: 1,
  suggested_mode: "auto", replay: { ...REPLAY, in_region: 30 },
};

const LIST: RegionList = {
  items: [region(), region({ id: "r-2", name: "big refunds", when: "params.amount > 5000", order: 1, decisions: 12,
                             acceptance: 1, e_value: 40.5, threshold: 32.9, auto_ready: true, decisions_needed: 0 })],
  proposals: [PROPOSAL], max_regions: 8, min_decisions: 30, identities: [],
};

const BASE = "/api/workflows/wf-1/steps/refund";

function stub(override: (call: RecordedCall) => Response | undefined = () => undefined) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === `${BASE}/regions` && call.method === "GET") return jsonResponse(LIST);
    if (call.url === `${BASE}/replay`) return jsonResponse(REPLAY);
    if (call.method !== "GET") return jsonResponse(region());
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const renderSection = (role = "lead") =>
  renderLive(<RegionsSection scope={{ kind: "step", workflowId: "wf-1", stepId: "refund" }} />, "/w", "/w", role);

const posts = (calls: RecordedCall[], url: string) => calls.filter((c) => c.method !== "GET" && c.url === url);

describe("RegionsSection", () => {
  it("lists the step's regions in order with their mode and progress to AUTO-ready", async () => {
    stub();
    renderSection();
    const table = await screen.findByRole("table", { name: "Regions of step refund, in their order" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("small refunds");
    expect(rows[1]).toHaveTextContent("params.amount <= 200");
    expect(rows[1]).toHaveTextContent("Coaching");
    expect(rows[1]).toHaveTextContent("4 decisions, 100% accepted");
    expect(rows[1]).toHaveTextContent("e-value 3.20 of the 8.22 needed");
    expect(rows[1]).toHaveTextContent("3 more decisions, all accepted");
    expect(rows[2]).toHaveTextContent("big refunds");
    expect(rows[2]).toHaveTextContent("AUTO-ready");
  });

  it("promotes only a ready region, after a confirmation, and says why the other is not ready", async () => {
    const { calls } = stub((call) =>
      call.url === "/api/regions/r-2/mode" ? jsonResponse(region({ id: "r-2", mode: "auto" })) : undefined);
    renderSection();
    const user = userEvent.setup();
    const table = await screen.findByRole("table", { name: /Regions of step refund/ });
    const rows = within(table).getAllByRole("row");
    const blocked = within(rows[1]).getByRole("button", { name: "Promote region small refunds to AUTO" });
    expect(blocked).toHaveAttribute("aria-disabled", "true");
    expect(blocked).toHaveAccessibleDescription("Not AUTO-ready: 3 more decisions, all accepted.");
    await user.click(blocked);
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(within(rows[1]).queryByRole("button", { name: /Force/ })).toBeNull(); // a lead, not an admin

    await user.click(within(rows[2]).getByRole("button", { name: "Promote region big refunds to AUTO" }));
    const dialog = screen.getByRole("dialog", { name: "Promote region “big refunds” to AUTO?" });
    await user.click(within(dialog).getByRole("button", { name: "Promote the region" }));
    expect(await screen.findByText(/Region “big refunds” is in AUTO/)).toBeInTheDocument();
    expect(posts(calls, "/api/regions/r-2/mode")[0].body).toEqual({ mode: "auto" });
    expect(posts(calls, "/api/regions/r-1/mode")).toHaveLength(0);

    await user.click(within(rows[1]).getByRole("button", { name: "Pin region small refunds to always review" }));
    await waitFor(() => expect(posts(calls, "/api/regions/r-1/mode")[0]?.body).toEqual({ mode: "always_review" }));
  });

  it("lets an admin force a region that is not ready, with a reason", async () => {
    const { calls } = stub();
    renderSection("admin");
    const user = userEvent.setup();
    const table = await screen.findByRole("table", { name: /Regions of step refund/ });
    await user.click(within(within(table).getAllByRole("row")[1]).getByRole("button", { name: "Force into AUTO… region small refunds" }));
    const dialog = screen.getByRole("dialog");
    await user.click(within(dialog).getByRole("button", { name: "Force the region into AUTO" }));
    expect(within(dialog).getByText(/A forced promotion needs a reason/)).toBeInTheDocument();
    await user.type(within(dialog).getByLabelText(/Why overrule the evidence/), "small and reversible");
    await user.click(within(dialog).getByRole("button", { name: "Force the region into AUTO" }));
    await waitFor(() =>
      expect(posts(calls, "/api/regions/r-1/mode")[0]?.body).toEqual({ mode: "auto", force: true, reason: "small and reversible" }));
  });

  it("replays a condition before it is added, with the numbers and links to the rejected calls", async () => {
    const { calls } = stub();
    renderSection();
    const user = userEvent.setup();
    const form = await screen.findByRole("form", { name: "Add a region" });
    await user.type(within(form).getByLabelText("Name"), "tiny refunds");
    await user.type(within(form).getByLabelText("Condition"), "params.amount <= 200");
    await user.click(within(form).getByRole("button", { name: "Replay" }));
    const replay = await within(form).findByRole("table", { name: /Replay of the condition params.amount <= 200/ });
    const rows = within(replay).getAllByRole("row");
    expect(rows[1]).toHaveTextContent(/Would have run unattended\s*6\s*5\s*0\s*1\s*0\s*0/);
    expect(rows[3]).toHaveTextContent(/Still asked\s*4\s*0\s*0\s*4/);
    expect(form).toHaveTextContent("the condition holds for 6");
    expect(form).toHaveTextContent("1 call reviewers corrected or rejected would have run unattended");
    expect(within(form).getByRole("link", { name: "execution ex-7" })).toHaveAttribute("href", "/executions/ex-7");
    expect(posts(calls, `${BASE}/replay`).at(-1)?.body).toEqual({ when: "params.amount <= 200" });

    await user.click(within(form).getByRole("button", { name: "Add the region" }));
    expect(await screen.findByText(/Added region “small refunds”/)).toBeInTheDocument();
    expect(posts(calls, `${BASE}/regions`)[0].body).toEqual({ name: "tiny refunds", when: "params.amount <= 200" });
    expect(within(form).getByLabelText("Condition")).toHaveValue("");
    expect(within(form).queryByRole("table")).toBeNull(); // no replay left behind of what was added
  });

  it("replays the condition as it is typed, after a pause", async () => {
    const { calls } = stub();
    renderSection();
    const user = userEvent.setup();
    const form = await screen.findByRole("form", { name: "Add a region" });
    await user.type(within(form).getByLabelText("Condition"), "params.amount < 9");
    await waitFor(() => expect(posts(calls, `${BASE}/replay`)).toHaveLength(1), { timeout: 3000 });
    expect(posts(calls, `${BASE}/replay`)[0].body).toEqual({ when: "params.amount < 9" }); // once, for the whole text
    expect(await within(form).findByRole("table", { name: /Replay of the condition/ })).toBeInTheDocument();
  });

  it("shows the server's 422 beside the condition field", async () => {
    stub((call) =>
      call.method === "POST" && call.url === `${BASE}/regions`
        ? errorResponse(422, "validation_failed", "`when` does not compile", { when: ["does not compile: unexpected end"] })
        : call.url === `${BASE}/replay`
          ? errorResponse(422, "validation_failed", "`when` does not compile", { when: ["does not compile: unexpected end"] })
          : undefined);
    renderSection();
    const user = userEvent.setup();
    const form = await screen.findByRole("form", { name: "Add a region" });
    await user.type(within(form).getByLabelText("Name"), "x");
    await user.type(within(form).getByLabelText("Condition"), "params.amount <=");
    await user.click(within(form).getByRole("button", { name: "Add the region" }));
    const field = within(form).getByLabelText("Condition");
    await waitFor(() => expect(field).toHaveAttribute("aria-invalid", "true"));
    expect(field).toHaveAccessibleDescription(/Condition: does not compile: unexpected end/);
    expect(field).toHaveFocus();
  });

  it("lists the proposals with their explanation, coverage and replay; Use this fills the form", async () => {
    stub();
    renderSection();
    const user = userEvent.setup();
    const proposal = (await screen.findByText("refund calls with amount ≤ 250: 30 of 30 accepted")).closest("li")!;
    expect(proposal).toHaveTextContent("Holds for 60% of the decisions (30)");
    expect(proposal).toHaveTextContent("at least 88.6% (95% lower bound)");
    expect(proposal).toHaveTextContent("a candidate for AUTO");
    await user.click(within(proposal as HTMLElement).getByRole("button", { name: /Show its replay/ }));
    expect(within(proposal as HTMLElement).getByRole("table", { name: /Replay of the proposal/ })).toBeInTheDocument();
    await user.click(within(proposal as HTMLElement).getByRole("button", { name: "Use this proposal: params.amount <= 250" }));
    const form = screen.getByRole("form", { name: "Add a region" });
    expect(within(form).getByLabelText("Name")).toHaveValue("refund calls with amount ≤ 250");
    expect(within(form).getByLabelText("Name")).toHaveFocus();
    expect(within(form).getByLabelText("Condition")).toHaveValue("params.amount <= 250");
  });

  it("edits a region: a new condition says it restarts the evidence", async () => {
    const { calls } = stub();
    renderSection();
    const user = userEvent.setup();
    const table = await screen.findByRole("table", { name: /Regions of step refund/ });
    await user.click(within(within(table).getAllByRole("row")[1]).getByRole("button", { name: "Edit… region small refunds" }));
    const dialog = screen.getByRole("dialog", { name: "Edit region “small refunds”" });
    expect(dialog).toHaveTextContent("Changing the condition restarts its evidence: the 4 decisions counted now no longer count");
    const when = within(dialog).getByLabelText("Condition");
    await user.clear(when);
    await user.type(when, "params.amount <= 100");
    await user.clear(within(dialog).getByLabelText("Order"));
    await user.type(within(dialog).getByLabelText("Order"), "5");
    await user.click(within(dialog).getByRole("button", { name: "Save and restart its evidence" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(posts(calls, "/api/regions/r-1")[0]).toMatchObject({ method: "PATCH", body: { when: "params.amount <= 100", order: 5 } });
  });

  it("removes a region after a confirmation", async () => {
    const { calls } = stub((call) => (call.method === "DELETE" ? new Response(null, { status: 204 }) : undefined));
    renderSection();
    const user = userEvent.setup();
    const table = await screen.findByRole("table", { name: /Regions of step refund/ });
    await user.click(within(within(table).getAllByRole("row")[2]).getByRole("button", { name: "Remove… region big refunds" }));
    const dialog = screen.getByRole("dialog", { name: "Remove region “big refunds”?" });
    expect(posts(calls, "/api/regions/r-2")).toHaveLength(0);
    await user.click(within(dialog).getByRole("button", { name: "Remove the region" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(posts(calls, "/api/regions/r-2")[0].method).toBe("DELETE");
  });
});

describe("RegionsSection of a gateway tool", () => {
  const TOOL = "/api/gateway/tools/shop.refund";
  const stubGateway = () =>
    stubFetch((call) => {
      if (call.url === `${TOOL}/regions` && call.method === "GET")
        return jsonResponse({
          ...LIST,
          items: [region({ scope: "gateway", tool: "shop.refund", workflow_id: undefined, step_id: undefined, identity: "old-bot" })],
          proposals: [],
          identities: ["claude-code", "cursor"],
        });
      if (call.url === `${TOOL}/replay`) return jsonResponse(REPLAY);
      if (call.method !== "GET") return jsonResponse(region({ scope: "gateway", identity: "cursor" }));
      return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
    });
  const renderGateway = () => renderLive(<RegionsSection scope={{ kind: "gateway", tool: "shop.refund" }} level={4} />, "/t", "/t");

  it("adds a region for one agent identity, replayed over that identity's calls", async () => {
    const { calls } = stubGateway();
    renderGateway();
    const user = userEvent.setup();
    const form = await screen.findByRole("form", { name: "Add a region" });
    const identity = within(form).getByLabelText("Agent identity");
    expect(within(identity).getAllByRole("option").map((o) => o.textContent)).toEqual(["Any agent identity", "claude-code", "cursor"]);
    expect(identity).toHaveValue("");
    await user.selectOptions(identity, "cursor");
    await user.type(within(form).getByLabelText("Name"), "small");
    await user.type(within(form).getByLabelText("Condition"), "params.amount <= 20");
    await user.click(within(form).getByRole("button", { name: "Replay" }));
    await waitFor(() => expect(posts(calls, `${TOOL}/replay`).at(-1)?.body).toEqual({ when: "params.amount <= 20", identity: "cursor" }));
    await user.click(within(form).getByRole("button", { name: "Add the region" }));
    expect(await screen.findByText(/Added region “small refunds” \(agent cursor's calls only\)/)).toBeInTheDocument();
    expect(posts(calls, `${TOOL}/regions`)[0].body).toEqual({ name: "small", when: "params.amount <= 20", identity: "cursor" });
    expect(identity).toHaveValue(""); // the form is empty again
  });

  it("lists a region's identity and sets it back to any in the edit dialog", async () => {
    const { calls } = stubGateway();
    renderGateway();
    const user = userEvent.setup();
    const table = await screen.findByRole("table", { name: /Regions of gateway tool shop.refund/ });
    const row = within(table).getAllByRole("row")[1];
    expect(row).toHaveTextContent("(agent old-bot only)");
    await user.click(within(row).getByRole("button", { name: "Edit… region small refunds" }));
    const dialog = screen.getByRole("dialog", { name: "Edit region “small refunds”" });
    const identity = within(dialog).getByLabelText("Agent identity");
    expect(identity).toHaveValue("old-bot"); // no longer an active identity: kept, and said so
    expect(within(identity).getByRole("option", { name: "old-bot (revoked)" })).toBeInTheDocument();
    await user.selectOptions(identity, "");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(posts(calls, "/api/regions/r-1")[0]?.body).toEqual({ identity: null }));
  });

  it("a step's form has no identity field", async () => {
    stub();
    renderSection();
    const form = await screen.findByRole("form", { name: "Add a region" });
    expect(within(form).queryByLabelText("Agent identity")).toBeNull();
  });
});
