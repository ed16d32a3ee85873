import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, stubFetch, type RecordedCall } from "../test/utils";
import { readyWorkflow, renderLive, series, snapshot } from "./testFixtures";
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
  thresholds: { coaching_after: 10, auto_min_window: 20, auto_acceptance: 0.85, window: 50 },
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
        steps: { fetch: snapshot({ decisions: 24, accepted: 22, acceptance_rate: 0.9167, level: "AUTO" }) },
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
    return errorResponse(404, "not_found", `unexpected ${call.url}`);
  });
}

const renderDetail = (route = "/workflows/wf-invoice") => renderLive(<WorkflowDetailPage />, route, "/workflows/:id");

describe("WorkflowDetailPage", () => {
  it("shows the definition, mode, metrics, packs link and executions of a workflow", async () => {
    const { calls } = stubDetail();
    renderDetail();

    expect(await screen.findByRole("heading", { level: 1, name: "Invoice intake" })).toBeInTheDocument();
    expect(screen.getByLabelText("Workflow")).toHaveTextContent("Versionv2 of 2ModeCoaching");
    expect(screen.getByLabelText("Workflow")).toHaveTextContent(
      "AUTO-ready at ≥ 85% rolling acceptance over ≥ 20 counted of the last 50 decisions; coaching after 10 decisions.",
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

  it("says when the workflow does not exist", async () => {
    stubDetail((call) => (call.url === "/api/workflows/wf-invoice" ? errorResponse(404, "not_found", "workflow wf-invoice not found") : undefined));
    renderDetail();
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("No such workflow");
    expect(alert).toHaveTextContent("workflow wf-invoice not found");
  });
});
