import { act, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, stubFetch, type RecordedCall } from "../test/utils";
import { readyWorkflow, renderLive, series, snapshot } from "./testFixtures";
import type { Evidence } from "../api/metrics";
import type { WorkflowDefinition } from "./types";
import WorkflowDetailPage from "./WorkflowDetailPage";

const definition: WorkflowDefinition = {
  id: "wf-invoice",
  version: 2,
  latest_version: 2,
  name: "Invoice intake",
  description: "Reads an invoice and files it.",
  variables: { who: { type: "string", default: "world" } },
  steps: [
    { id: "fetch", type: "action", tool: "http.request", params: { url: "https://example.com/{{ vars.who }}" }, timeout_s: 30, retries: 2 },
    { id: "check", type: "validation", depends_on: ["fetch"], condition: "steps.fetch.output.status == 200", when: "vars.who != ''" },
  ],
  level: "AUTO",
  mode: "coaching",
  auto_ready: true,
  thresholds: { coaching_after: 10, auto_min_window: 20, auto_acceptance: 0.85, window: 50, auto_alpha: 0.05 },
};

function stubDetail(override: (call: RecordedCall) => Response | undefined = () => undefined) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === "/api/workflows/wf-invoice") return jsonResponse(definition);
    if (call.url === "/api/workflows/wf-invoice?version=1")
      return jsonResponse({ ...definition, version: 1, steps: [definition.steps[0]] });
    if (call.url === "/api/metrics/workflows/wf-invoice")
      return jsonResponse({
        ...readyWorkflow,
        steps: { fetch: snapshot({ decisions: 24, accepted: 22, acceptance_rate: 0.9167, level: "AUTO", auto_ready: true }) },
        current_version: { ...snapshot({ decisions: 20, acceptance_rate: 0.95 }), version: 2 },
        series,
      });
    if (call.url.startsWith("/api/executions/?workflow_id=wf-invoice"))
      return jsonResponse({
        items: [{ execution_id: "ex-9", workflow_id: "wf-invoice", workflow_version: 2, mode: "coaching", status: "completed", progress: { done: 2, total: 2, percent: 100 }, steps: [], is_coaching: true }],
        total: 1,
        page: 1,
        per_page: 10,
      });
    // the Reviewers section (leads): one operator, one fast accept
    if (call.url === "/api/metrics/workflows/wf-invoice/reviewers")
      return jsonResponse({
        workflow_id: "wf-invoice", step_id: null, days: 30, since: "2026-10-29T09:00:00+00:00", floor_ms: 1500,
        scopes: ["fetch"], decisions: 2,
        items: [{ operator: "ann@example.com", decisions: 2, accepts: 2, median_ms: 1300, p90_ms: 2000, fast_accepts: 1, fast_accept_share: 0.5 }],
      });
    if (call.url === "/api/workspace/reviews")
      return jsonResponse({ attentive_floor_ms: 1500, default_ms: 1500, min_ms: 100, max_ms: 600000, workspace: false });
    // the Triggers section (src/triggers/): none yet
    if (call.url === "/api/workflows/wf-invoice/hooks" || call.url === "/api/workflows/wf-invoice/schedules")
      return jsonResponse({ items: [] });
    if (call.url.startsWith("/api/workflows/wf-invoice/schedules/preview?"))
      return jsonResponse({ cron: "0 9 * * MON-FRI", timezone: "UTC", description: "At 09:00", next_fire_times: [] });
    // the Regions section of its tool step (src/regions/): none yet
    if (call.url === "/api/workflows/wf-invoice/steps/fetch/regions")
      return jsonResponse({ items: [], proposals: [], max_regions: 8, min_decisions: 30, identities: [] });
    return errorResponse(404, "not_found", `unexpected ${call.url}`);
  });
}

const renderDetail = (route = "/workflows/wf-invoice", role = "lead") =>
  renderLive(<WorkflowDetailPage />, route, "/workflows/:id", role);

describe("WorkflowDetailPage", () => {
  it("shows the definition, mode, metrics, packs link and executions of a workflow", async () => {
    const { calls } = stubDetail();
    renderDetail();

    expect(await screen.findByRole("heading", { level: 1, name: "Invoice intake" })).toBeInTheDocument();
    expect(screen.getByLabelText("Workflow")).toHaveTextContent("Versionv2 of 2ModeCoaching");
    expect(screen.getByLabelText("Workflow")).toHaveTextContent(
      "AUTO-ready once the evidence shows acceptance of at least 85% (sequential test at error level 0.05), after at " +
        "least 20 counted decisions; rolling figures over the last 50 decisions; coaching after 10 decisions.",
    );
    expect(screen.getByRole("button", { name: "Promote Invoice intake to AUTO" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Correction packs of Invoice intake" })).toHaveAttribute(
      "href",
      "/correction-packs?workflow=wf-invoice",
    );

    const steps = within(screen.getByRole("list", { name: "Steps of version 2" })).getAllByRole("listitem");
    expect(steps).toHaveLength(2);
    expect(steps[0]).toHaveTextContent("Toolhttp.request");
    expect(steps[0]).toHaveTextContent('"url": "https://example.com/{{ vars.who }}"');
    expect(steps[0]).toHaveTextContent("Timeout30 s");
    expect(steps[1]).toHaveTextContent("Depends onfetch");
    expect(steps[1]).toHaveTextContent("Runs whenvars.who != ''");
    expect(steps[1]).toHaveTextContent("Conditionsteps.fetch.output.status == 200");
    expect(screen.getByRole("rowheader", { name: "who" }).closest("tr")).toHaveTextContent('string"world"No');

    const versions = within(screen.getByRole("navigation", { name: "Versions" })).getAllByRole("link");
    expect(versions.map((v) => v.textContent)).toEqual(["v2 (latest)", "v1"]);
    expect(versions[0]).toHaveAttribute("aria-current", "page");

    const metrics = await screen.findByLabelText("Metrics of Invoice intake");
    expect(metrics).toHaveTextContent("AUTO-ready");
    expect(metrics).toHaveTextContent("Version 2 alone20 decisions, 95% accepted");
    expect(screen.getByRole("table", { name: "Metrics per step of Invoice intake" })).toHaveTextContent("fetch");
    expect(await screen.findByRole("figure", { name: /Acceptance over time — “Invoice intake”/ })).toBeInTheDocument();

    expect(await screen.findByRole("link", { name: "ex-9" })).toHaveAttribute("href", "/executions/ex-9");
    expect(calls.map((c) => c.url)).toContain("/api/executions/?workflow_id=wf-invoice&per_page=10");

    // a lead reads each operator's time to decide, and sets the floor
    const reviewers = await screen.findByRole("table", { name: "Reviewers of Invoice intake: time to decide and fast accepts" });
    expect(within(reviewers).getByRole("rowheader", { name: "ann@example.com" }).closest("tr")).toHaveTextContent(
      "Flagged 1 of 2 accepts (50%) faster than 1.5 s",
    );
    expect(await screen.findByRole("form", { name: "Floor for fast accepts" })).toBeInTheDocument();
  });

  it("lists each tool step's autonomy and promotes, pins and unpins one step from the keyboard", async () => {
    let modes: Record<string, string> = {};
    const { calls } = stubDetail((call) => {
      const m = call.url.match(/^\/api\/workflows\/wf-invoice\/steps\/(\w+)\/mode$/);
      if (!m || call.method !== "POST") return undefined;
      const mode = (call.body as { mode: string }).mode;
      if (mode === "auto" && modes[m[1]] === "always_review")
        return errorResponse(409, "conflict", "this step is pinned to always_review: set it to coaching first to unpin it");
      modes = mode === "coaching" ? {} : { [m[1]]: mode };
      return jsonResponse({ ...definition, step_modes: modes });
    });
    const user = userEvent.setup();
    renderDetail();
    const table = await screen.findByRole("table", { name: "Autonomy of each step of Invoice intake" });
    // the tool step only: a validation step is never suggested, so it has no mode
    expect(within(table).getAllByRole("rowheader").map((r) => r.textContent)).toEqual(["fetch"]);
    expect(within(table).getByRole("rowheader", { name: "fetch" }).closest("tr")).toHaveTextContent("Follows the workflow");

    // promotion asks first; focus starts on Cancel (a stray Enter does nothing), Tab then Enter confirms
    within(table).getByRole("button", { name: "Promote fetch of Invoice intake to AUTO" }).focus();
    await user.keyboard("{Enter}");
    const dialog = await screen.findByRole("dialog", { name: "Promote step “fetch” of “Invoice intake” to AUTO?" });
    expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.tab();
    expect(within(dialog).getByRole("button", { name: "Promote the step" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(await screen.findByText(/Step “fetch” of “Invoice intake” is now in AUTO/)).toBeInTheDocument();
    const posted = calls.filter((c) => c.method === "POST").map((c) => [c.url, c.body]);
    expect(posted).toEqual([["/api/workflows/wf-invoice/steps/fetch/mode", { mode: "auto" }]]);

    await user.click(within(table).getByRole("button", { name: "Pin fetch of Invoice intake to always review" }));
    expect(await screen.findByText(/is pinned: every run of it is decided by a person/)).toBeInTheDocument();
    expect(calls.filter((c) => c.method === "POST").at(-1)?.body).toEqual({ mode: "always_review" });
  });

  it("shows an operator the modes and levels but none of the lead's buttons", async () => {
    const { calls } = stubDetail();
    renderDetail(undefined, "operator");
    const table = await screen.findByRole("table", { name: "Autonomy of each step of Invoice intake" });
    expect(within(table).getByRole("rowheader", { name: "fetch" }).closest("tr")).toHaveTextContent("Follows the workflow");
    expect(within(table).queryAllByRole("button")).toEqual([]);
    expect(screen.queryByRole("button", { name: /Promote|Demote/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /threshold/i })).not.toBeInTheDocument();
    expect(screen.queryByRole("group", { name: /threshold/i })).not.toBeInTheDocument();
    // the reviewers' figures are the lead's (the server answers an operator 403)
    expect(screen.queryByRole("heading", { name: "Reviewers" })).not.toBeInTheDocument();
    expect(calls.some((c) => c.url.includes("/reviewers"))).toBe(false);
  });

  it("says why the server refused a step's promotion", async () => {
    stubDetail((call) =>
      call.method === "POST" ? errorResponse(409, "conflict", "this step is not AUTO-ready yet") : undefined,
    );
    const user = userEvent.setup();
    renderDetail();
    const table = await screen.findByRole("table", { name: "Autonomy of each step of Invoice intake" });
    await user.click(within(table).getByRole("button", { name: "Promote fetch of Invoice intake to AUTO" }));
    await user.click(await screen.findByRole("button", { name: "Promote the step" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not set step “fetch” of “Invoice intake” to auto (this step alone)");
    expect(alert).toHaveTextContent("this step is not AUTO-ready yet");
  });

  it("shows each step's statistic against its threshold, the decisions it needs and the decisions behind it", async () => {
    const twoSteps = {
      ...definition,
      steps: [definition.steps[0], { id: "file", type: "action", tool: "file.write", params: { path: "x" } }],
    };
    const evidence: Evidence = { statistic: 1.1, statistic_kind: "log_e_value", e_value: 3.0, threshold: 20, log_threshold: 3.0,
      decisions_needed_if_all_accepted: 6, test: "e-process", accepted_since_restart: 8, counted_since_restart: 10 };
    const { calls } = stubDetail((call) => {
      if (call.url === "/api/workflows/wf-invoice") return jsonResponse(twoSteps);
      if (call.url === "/api/metrics/workflows/wf-invoice")
        return jsonResponse({
          ...readyWorkflow,
          steps: {
            fetch: snapshot({ decisions: 24, level: "AUTO", auto_ready: true, decisions_needed: 0 }),
            file: snapshot({ decisions: 10, level: "COACHING", rolling_acceptance_rate: 0.8, evidence, decisions_needed: 10 }),
          },
          current_version: { ...snapshot({ decisions: 20 }), version: 2 },
          series,
        });
      if (call.url === "/api/metrics/workflows/wf-invoice/steps/file/decisions?limit=50")
        return jsonResponse({ items: [
          { decision_id: "d2", suggestion_id: "s2", execution_id: "ex-22222222", decision: "reject", operator: "ann@x", created_at: "2026-11-27T10:00:00Z", latency_ms: 5, outcome: null, counted: true },
          { decision_id: "d1", suggestion_id: "s1", execution_id: "ex-11111111", decision: "skip", operator: "bob@x", created_at: "2026-11-27T09:00:00Z", latency_ms: 5, outcome: null, counted: false },
        ] });
      return undefined;
    });
    const user = userEvent.setup();
    renderDetail();
    const card = await screen.findByRole("article", { name: "Evidence of step file of Invoice intake" });
    expect(card).toHaveTextContent("e-value 3.00 of the 20.0 needed (8 accepted of 10 counted)");
    expect(card).toHaveTextContent("80% against the 85% bar");
    expect(card).toHaveTextContent("10 more decisions, all accepted");
    expect(screen.getByRole("article", { name: "Evidence of step fetch of Invoice intake" })).toHaveTextContent("none: AUTO-ready");

    await user.click(within(card).getByRole("button", { name: "Show the decisions behind step file" }));
    const table = await within(card).findByRole("table", { name: "Latest decisions of step file, newest first" });
    expect(within(table).getAllByRole("row").slice(1).map((r) => r.textContent)).toEqual([
      expect.stringContaining("Rejectedann@x"),
      expect.stringContaining("Skipped (not counted)bob@x"),
    ]);
    expect(within(table).getAllByRole("link")[0]).toHaveAttribute("href", "/executions/ex-22222222");
    expect(calls.map((c) => c.url)).toContain("/api/metrics/workflows/wf-invoice/steps/file/decisions?limit=50");

    // the workflow is AUTO-ready, one of its steps is not: the promotion says so before it is confirmed
    await user.click(screen.getByRole("button", { name: "Promote Invoice intake to AUTO" }));
    const dialog = screen.getByRole("dialog", { name: "Promote “Invoice intake” to AUTO?" });
    expect(within(dialog).getByTestId("steps-not-ready")).toHaveTextContent(
      "1 step is not AUTO-ready on its own evidence and will run unattended too:file: Coaching, 10 decisions (about 10 more accepted decisions needed)",
    );
  });

  it("shows an older version from ?version=", async () => {
    stubDetail();
    renderDetail("/workflows/wf-invoice?version=1");

    expect(await screen.findByText("You are reading version 1; new executions use version 2.")).toBeInTheDocument();
    expect(within(screen.getByRole("list", { name: "Steps of version 1" })).getAllByRole("listitem")).toHaveLength(1);
    expect(within(screen.getByRole("navigation", { name: "Versions" })).getByRole("link", { name: "v1" })).toHaveAttribute(
      "aria-current",
      "page",
    );
  });

  it("keeps the page when a re-read of the workflow fails", async () => {
    let failing = false;
    stubDetail((call) => (failing && call.url === "/api/workflows/wf-invoice" ? errorResponse(503, "unavailable", "busy") : undefined));
    const { queryClient } = renderDetail();
    expect(await screen.findByRole("heading", { level: 1, name: /Invoice intake/ })).toBeInTheDocument();
    failing = true;
    await act(() => queryClient.refetchQueries());
    expect(screen.getByRole("heading", { level: 1, name: /Invoice intake/ })).toBeInTheDocument();
    expect(screen.queryByText("Could not load the workflow")).not.toBeInTheDocument();
  });

  it("says when the workflow does not exist", async () => {
    stubDetail((call) => (call.url === "/api/workflows/wf-invoice" ? errorResponse(404, "not_found", "workflow wf-invoice not found") : undefined));
    renderDetail();
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("No such workflow");
    expect(alert).toHaveTextContent("workflow wf-invoice not found");
  });

  it("lists the regions of an agent step's tools for leads, the tool with decisions first", async () => {
    const agentOnly = { ...definition, steps: [{ id: "pay", type: "agent", goal: "Pay", tools: ["echo", "file.*"] }] };
    const agentDetail = (role: string) => {
      const stub = stubDetail((call) => {
        if (call.url === "/api/workflows/wf-invoice") return jsonResponse(agentOnly);
        if (call.url === "/api/metrics/workflows/wf-invoice")
          return jsonResponse({ ...readyWorkflow, steps: { pay: snapshot({ decisions: 3 }), "pay:echo": snapshot({ decisions: 3 }) }, series });
        if (call.url === "/api/tools")
          return jsonResponse({ items: ["echo", "file.read", "file.write", "http.request"].map((name) => ({ name })) });
        if (call.url === `/api/workflows/wf-invoice/steps/${encodeURIComponent("pay:echo")}/regions`)
          return jsonResponse({ items: [], proposals: [], max_regions: 8, min_decisions: 30, identities: [] });
        return undefined;
      });
      renderDetail("/workflows/wf-invoice", role);
      return stub;
    };
    agentDetail("lead");
    const section = await screen.findByRole("region", { name: "Regions of agent step pay" });
    const tool = within(section).getByLabelText("Tool");
    expect(await within(tool).findByRole("option", { name: "file.write" })).toBeInTheDocument();
    expect(within(tool).getAllByRole("option").map((o) => o.textContent)).toEqual(["echo (3 decided)", "file.read", "file.write"]);
    expect(await within(section).findByRole("region", { name: "Regions of tool echo of agent step pay" })).toBeInTheDocument();
    // an agent step alone: no table of tool steps' modes, but the Steps heading for its regions
    expect(screen.getByRole("heading", { level: 2, name: "Steps" })).toBeInTheDocument();
    expect(screen.queryByRole("table", { name: /Autonomy of each step/ })).toBeNull();
  });

  it("shows an operator no regions of an agent step", async () => {
    stubDetail((call) =>
      call.url === "/api/workflows/wf-invoice"
        ? jsonResponse({ ...definition, steps: [{ id: "pay", type: "agent", goal: "Pay", tools: ["echo"] }] })
        : undefined);
    renderDetail("/workflows/wf-invoice", "operator");
    expect(await screen.findByRole("heading", { level: 1, name: "Invoice intake" })).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: /Regions of agent step/ })).toBeNull();
  });
});
