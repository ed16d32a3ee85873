import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, stubFetch } from "../test/utils";
import { StepEvidence } from "./StepEvidence";
import { renderLive, snapshot } from "./testFixtures";

const rows = [
  {
    workflowId: "wf-invoice",
    workflowName: "Invoice intake",
    stepId: "book",
    mode: "coaching" as const,
    metrics: { ...snapshot({ evidence_decisions: 8, attentive_decisions: 5 }), mode: "coaching" as const },
  },
];

const decision = (id: string, kind: string, counted: boolean, attentive: boolean) => ({
  decision_id: id, suggestion_id: `s-${id}`, execution_id: `ex-${id}`, step_id: "book", decision: kind,
  operator: "ops@example.com", created_at: "2026-12-01T10:00:00Z", latency_ms: 900, outcome: null, counted, attentive,
  evidence: counted ? { e_value_before: 1, e_value_after: 1.2, accepts_needed_after: 10 } : null,
});

describe("StepEvidence", () => {
  it("says how many of a step's decisions in the evidence came from attentive reviewers, and which were left out", async () => {
    const user = userEvent.setup();
    stubFetch((call) =>
      call.url.startsWith("/api/metrics/workflows/wf-invoice/steps/book/decisions")
        ? jsonResponse({ items: [decision("2", "accept", false, false), decision("1", "accept", true, true)] })
        : errorResponse(404, "not_found", call.url),
    );
    renderLive(
      <StepEvidence workflowId="wf-invoice" workflowName="Invoice intake" rows={rows} evidenceFrom="attentive" />,
      "/workflows/wf-invoice",
      "/workflows/:id",
    );
    const card = screen.getByRole("article", { name: "Evidence of step book of Invoice intake" });
    const line = within(card).getByText(/5 of 8 decisions in the evidence came from attentive reviewers/);
    expect(line).toHaveTextContent("only theirs count in the readiness test");
    expect(within(card).getByText("From attentive reviewers")).toBeInTheDocument();
    await user.click(within(card).getByRole("button", { name: /Show the decisions/ }));
    const table = await within(card).findByRole("table");
    const [, left, counted] = within(table).getAllByRole("row");
    expect(left).toHaveTextContent("Accepted (not counted: not an attentive reviewer then)");
    expect(counted).not.toHaveTextContent("not counted");
  });

  it("says nothing of attentive reviewers where every decision counts and none came from one", () => {
    const plain = [{ ...rows[0], metrics: { ...rows[0].metrics, attentive_decisions: 0 } }];
    renderLive(<StepEvidence workflowId="wf-invoice" workflowName="Invoice intake" rows={plain} evidenceFrom="all" />, "/w", "/w");
    expect(screen.queryByText("From attentive reviewers")).not.toBeInTheDocument();
  });
});
