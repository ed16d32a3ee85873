import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, stubFetch } from "../test/utils";
import { attentiveLine, EvidenceTrail, poolingNote } from "./EvidenceTrail";
import type { Evidence, WorkflowMetrics } from "../api/metrics";
import { readyWorkflow, renderLive, snapshot } from "./testFixtures";

const evidence = (e_value: number, counted: number): Evidence => ({
  statistic: Math.log(e_value), statistic_kind: "log_e_value", e_value, threshold: 20, log_threshold: Math.log(20),
  decisions_needed_if_all_accepted: 0, test: "beta-binomial mixture e-process", accepted_since_restart: counted - 2,
  counted_since_restart: counted, drop_statistic: 0, drop_alarm: false,
});

const step = (ready: boolean) => ({
  ...snapshot({ auto_ready: ready, level: ready ? "AUTO" : "COACHING" }),
  mode: "coaching" as const,
});

const workflow: WorkflowMetrics = {
  ...readyWorkflow,
  evidence: evidence(24.1, 60),
  steps: {
    fetch: step(true),
    book: step(false),
    notify: step(false),
  },
};

const decision = (id: string, kind: string, before: number, after: number, needed: number | null) => ({
  decision_id: id, suggestion_id: `s-${id}`, execution_id: `ex-${id}`, step_id: "book", decision: kind,
  operator: "ops@example.com", created_at: "2026-12-01T10:00:00Z", latency_ms: 900, outcome: null,
  counted: kind !== "skip", evidence: { e_value_before: before, e_value_after: after, accepts_needed_after: needed },
});

describe("EvidenceTrail", () => {
  it("shows the e-value against its threshold and what each of the last decisions did to it", async () => {
    stubFetch((call) =>
      call.url === "/api/metrics/workflows/wf-invoice/decisions?limit=10"
        ? jsonResponse({ items: [decision("2", "reject", 24.1, 9.3, 27), decision("1", "accept", 21.0, 24.1, 0)] })
        : errorResponse(404, "not_found", call.url),
    );
    renderLive(<EvidenceTrail metrics={workflow} />, "/workflows/wf-invoice", "/workflows/:id");
    const table = await screen.findByRole("table", { name: /Latest decisions of Invoice intake/ });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("Rejected");
    expect(rows[1]).toHaveTextContent("e-value 24.1 → 9.30 (then 27 more accepts in a row)");
    expect(rows[2]).toHaveTextContent("e-value 21.0 → 24.1 (the 20.0 needed is met)");
    expect(screen.getByText(/The workflow's e-value is/)).toHaveTextContent("24.1; AUTO-ready needs 20.0");
  });

  it("says why a workflow can be AUTO-ready while steps are not", () => {
    expect(poolingNote(workflow)).toMatch(/pools the decisions of all its steps \(60 counted/);
    expect(poolingNote(workflow)).toMatch(/while 2 of its 3 steps are not: book, notify have/);
    const notReady = { ...workflow, auto_ready: false };
    expect(poolingNote(notReady)).toMatch(/A step can be AUTO-ready on its own while the workflow is not/);
    const allReady = { ...workflow, steps: { fetch: step(true) } };
    expect(poolingNote(allReady)).toBe("");
  });

  it("says how many of the decisions in the evidence came from attentive reviewers", async () => {
    stubFetch((call) =>
      call.url === "/api/metrics/workflows/wf-invoice/decisions?limit=10"
        ? jsonResponse({ items: [] })
        : errorResponse(404, "not_found", call.url),
    );
    const restricted = { ...workflow, evidence_from: "attentive" as const, evidence_decisions: 12, attentive_decisions: 9 };
    renderLive(<EvidenceTrail metrics={restricted} />, "/workflows/wf-invoice", "/workflows/:id");
    expect(await screen.findByText(/9 of 12 decisions in the evidence came from attentive reviewers/)).toHaveTextContent(
      "only theirs count in the readiness test",
    );
  });

  it("says nothing of attentive reviewers where every decision counts and none came from one", () => {
    expect(attentiveLine({ ...workflow, evidence_decisions: 12, attentive_decisions: 0 }, "all")).toBe("");
    expect(attentiveLine({ ...workflow, evidence_decisions: 12, attentive_decisions: 3 }, "all")).toBe(
      "3 of 12 decisions in the evidence came from attentive reviewers",
    );
    expect(attentiveLine({ ...workflow, evidence_decisions: 1, attentive_decisions: 0 }, "attentive")).toBe(
      "0 of 1 decision in the evidence came from attentive reviewers",
    );
    expect(attentiveLine(undefined, "attentive")).toBe("");
  });
});
