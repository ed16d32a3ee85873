import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { snapshot } from "../dashboards/testFixtures";
import { renderApp, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import { REPLAY } from "../regions/testFixtures";
import type { GatewayAgentTool, GatewayTool, GatewayTools } from "./gatewayLearning";

const EVIDENCE = { statistic: 3.1, threshold: 20, log_threshold: 3.0, e_value: 22.4,
                   decisions_needed_if_all_accepted: 0, test: "mixture" };
const agentRow = (overrides: Partial<GatewayAgentTool> = {}): GatewayAgentTool => ({
  ...snapshot({ decisions: 28, accepted: 28, acceptance_rate: 1, level: "AUTO", auto_ready: true, evidence: EVIDENCE }),
  mode: "coaching", effective_mode: "coaching", mode_of: null, spot_check_rate: null, spot_checks: null, at_agent: null,
  ...overrides,
});
const READY: GatewayTool = {
  ...snapshot({ decisions: 28, accepted: 28, acceptance_rate: 1, level: "AUTO", auto_ready: true, evidence: EVIDENCE }),
  tool: "shop.add", source: "gateway", listed: true, mode: "coaching", spot_check_rate: null, spot_checks: null,
  pack: { pack_id: "p-1", tool: "shop.add", enabled: false, corrections: 3, changes: [],
          rules: [{ field: "b", before: 1, after: 2, count: 3, share: 1 }] },
  agents: { learner: agentRow({ at_agent: snapshot({ decisions: 5, accepted: 5, acceptance_rate: 1 }) }) },
};
const COACHED: GatewayTool = {
  ...snapshot({ decisions: 3, accepted: 1, corrected: 1, rejected: 1, acceptance_rate: 1 / 3, level: "OBSERVATION",
                evidence: { ...EVIDENCE, e_value: 0.2, decisions_needed_if_all_accepted: 40 } }),
  tool: "shop.tally", source: "gateway", listed: true, mode: "auto", spot_check_rate: 0.2,
  spot_checks: snapshot({ decisions: 2, accepted: 1, rejected: 1, acceptance_rate: 0.5 }), pack: null, agents: {},
};
const PAGE: GatewayTools = {
  items: [READY, COACHED], spot_check_rate: 0.05,
  identities: { learner: snapshot({ decisions: 31, accepted: 29, corrected: 1, rejected: 1, acceptance_rate: 29 / 31 }) },
};

async function openTools(handler: (call: RecordedCall) => Response | undefined = () => undefined,
  role: "operator" | "lead" | "admin" = "lead") {
  const session = { ...testSession, workspaces: [{ ...testSession.workspaces[0], role }] };
  const { calls } = stubSignedInFetch((call) => {
    const answer = handler(call);
    if (answer) return answer;
    if (call.url === "/api/tools" || call.url === "/api/tool-servers" || call.url === "/api/agents")
      return jsonResponse({ items: [] });
    if (call.url === "/api/gateway/tools" && call.method === "GET") return jsonResponse(PAGE);
    return jsonResponse({});
  }, session);
  renderApp("/tools");
  await screen.findByRole("table", { name: "Every tool" });
  return { calls, user: userEvent.setup() };
}

describe("GatewayLearningSection", () => {
  it("shows each gateway tool's level, statistic against its threshold, spot checks and mode, and each agent's", async () => {
    await openTools();
    const table = await screen.findByRole("table", { name: "Gateway tools" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("shop.add");
    expect(rows[1]).toHaveTextContent("AUTO-ready");
    expect(rows[1]).toHaveTextContent("e-value 22.4 of the 20.0 needed");
    expect(rows[2]).toHaveTextContent("for agent learner");
    expect(rows[2]).toHaveTextContent("Follows the tool");
    expect(rows[2]).toHaveTextContent("5 by the agent's user"); // answers to a confirm rule's question
    expect(rows[1]).not.toHaveTextContent("by the agent's user");
    expect(rows[3]).toHaveTextContent("shop.tally");
    expect(rows[3]).toHaveTextContent("AUTO (spot checks)");
    expect(rows[3]).toHaveTextContent("2, 50% accepted");
    expect(within(rows[3]).getByRole("button", { name: /Back to coaching/ })).toBeInTheDocument();
    const identities = screen.getByRole("table", { name: "Agent identities: their decisions across tools" });
    expect(within(identities).getAllByRole("row")[1]).toHaveTextContent(/learner\s*31\s*29\s*1\s*1/);
  });

  it("promotes a ready tool after a confirmation, and only a ready one (for a lead)", async () => {
    const { calls, user } = await openTools((call) =>
      call.method === "POST" ? jsonResponse({ tool: "shop.add", mode: "auto" }) : undefined);
    const table = await screen.findByRole("table", { name: "Gateway tools" });
    const rows = within(table).getAllByRole("row");
    expect(within(rows[3]).queryByRole("button", { name: /Promote|Force/ })).toBeNull();
    await user.click(within(rows[1]).getByRole("button", { name: "Promote shop.add to AUTO" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Promote" }));
    expect(await screen.findByText(/shop.add is in AUTO/)).toBeInTheDocument();
    expect(calls.find((c) => c.method === "POST")).toMatchObject({
      url: "/api/gateway/tools/shop.add/mode", body: { mode: "auto" } });
    await user.click(within(rows[2]).getByRole("button", { name: "Promote shop.add for agent learner to AUTO" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Promote" }));
    expect(calls.filter((c) => c.method === "POST")[1].body).toEqual({ mode: "auto", agent: "learner" });
  });

  it("pins a tool at once and says why a change failed", async () => {
    const { calls, user } = await openTools((call) =>
      call.method === "POST" ? errorResponse(409, "conflict", "this tool is pinned") : undefined, "admin");
    await user.click(await screen.findByRole("button", { name: "Pin shop.tally to always review" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("this tool is pinned");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ mode: "always_review" });
  });

  it("shows a tool's learned rules and lets a lead accept them", async () => {
    const { calls, user } = await openTools((call) =>
      call.method === "PATCH" ? jsonResponse({ pack_id: "p-1", enabled: true }) : undefined);
    const table = await screen.findByRole("table", { name: "Gateway tools" });
    const row = within(table).getAllByRole("row")[1];
    expect(row).toHaveTextContent("b: 1 → 2");
    expect(row).toHaveTextContent("(3 edits)");
    await user.click(within(row).getByRole("button", { name: "Accept the rules of shop.add" }));
    await waitFor(() => expect(calls.some((c) => c.method === "PATCH")).toBe(true));
    expect(calls.find((c) => c.method === "PATCH")).toMatchObject({ url: "/api/gateway/tools/shop.add/pack",
                                                                   body: { enabled: true } });
  });

  it("folds its columns so the table stays readable, and shows a tool's regions when opened", async () => {
    const { calls, user } = await openTools((call) =>
      call.url === "/api/gateway/tools/shop.add/regions"
        ? jsonResponse({ items: [{ id: "r-9", name: "small sums", when: "params.a < 10", order: 0, mode: "auto",
                                   scope: "gateway", tool: "shop.add", identity: null, created_at: "2026-11-01T09:00:00Z",
                                   updated_at: "2026-11-01T09:00:00Z", decisions: 31, acceptance: 1, e_value: 40,
                                   threshold: 32.9, auto_ready: true, decisions_needed: 0, level: "AUTO",
                                   alpha_share: 0.0304, scope_alpha: 0.05, condition_version: 1,
                                   spot_checks: { decisions: 2, acceptance: 1 } }],
                         proposals: [], max_regions: 8, min_decisions: 30 })
        : call.url === "/api/gateway/tools/shop.add/replay"
          ? jsonResponse(REPLAY)
          : undefined);
    const table = await screen.findByRole("table", { name: "Gateway tools" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual(
      ["Tool", "Level", "Decisions", "Statistic", "Mode", "Learned rules", "Actions"]);
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("100% accepted");
    expect(calls.some((c) => c.url.includes("/regions"))).toBe(false); // read when opened, not per tool listed
    const open = screen.getByRole("button", { name: "Show the regions of shop.add" });
    expect(open).toHaveAttribute("aria-expanded", "false");
    await user.click(open);
    const regions = await screen.findByRole("table", { name: "Regions of gateway tool shop.add, in their order" });
    expect(within(regions).getAllByRole("row")[1]).toHaveTextContent("small sums");
    expect(within(regions).getAllByRole("row")[1]).toHaveTextContent("AUTO (spot checks)");
    expect(within(within(regions).getAllByRole("row")[1]).getByRole("button", { name: "Back to coaching region small sums" }))
      .toBeInTheDocument();
    const form = screen.getByRole("form", { name: "Add a region" });
    await user.type(within(form).getByLabelText("Condition"), "agent == 'sum-bot'");
    await user.click(within(form).getByRole("button", { name: "Replay" }));
    expect(await within(form).findByRole("table", { name: /Replay of the condition/ })).toBeInTheDocument();
    expect(calls.find((c) => c.url === "/api/gateway/tools/shop.add/replay")?.body).toEqual({ when: "agent == 'sum-bot'" });
  });

  it("is not shown to an operator", async () => {
    const { calls } = await openTools(undefined, "operator");
    expect(screen.queryByRole("heading", { name: "Learning per gateway tool" })).toBeNull();
    expect(calls.some((c) => c.url === "/api/gateway/tools")).toBe(false);
  });
});
