/** Payloads and a renderer shared by the lead pages' component tests (shapes copied from the real API). */
import type { ReactElement } from "react";
import { RealtimeProvider } from "../realtime/RealtimeProvider";
import { AsRole, renderPage } from "../test/utils";
import type { GlobalMetrics, MetricsSnapshot, MetricsTotals, OperatorMetrics, SeriesPoint, WorkflowMetrics } from "../api/metrics";
import type { CorrectionPack } from "./types";

/** The workspace's or an operator's totals (counted from the decisions: no level, no readiness test). */
export function totals(overrides: Partial<MetricsTotals> = {}): MetricsTotals {
  return {
    decisions: 0,
    suggestions: 0,
    accepted: 0,
    rejected: 0,
    corrected: 0,
    manual: 0,
    skipped: 0,
    acceptance_rate: 0,
    rolling_acceptance_rate: 0,
    confidence: 0,
    decision_latency_ms: { p50: null, p90: null },
    window_size: 50,
    window_decisions: 0,
    ...overrides,
  };
}

export function snapshot(overrides: Partial<MetricsSnapshot> = {}): MetricsSnapshot {
  return {
    ...totals(),
    level: "OBSERVATION",
    auto_ready: false,
    to_auto: {
      decisions_to_coaching: 10,
      window_decisions_needed: 20,
      acceptance_gap: 0.85,
      auto_min_window: 20,
      auto_acceptance: 0.85,
    },
    ...overrides,
  };
}

export const readyWorkflow: WorkflowMetrics = {
  ...snapshot({
    decisions: 24,
    suggestions: 24,
    accepted: 22,
    corrected: 1,
    rejected: 1,
    acceptance_rate: 0.9167,
    rolling_acceptance_rate: 0.9167,
    confidence: 0.7415,
    decision_latency_ms: { p50: 900, p90: 2100 },
    level: "AUTO",
    auto_ready: true,
    window_decisions: 24,
    to_auto: { decisions_to_coaching: 0, window_decisions_needed: 0, acceptance_gap: 0, auto_min_window: 20, auto_acceptance: 0.85 },
  }),
  workflow_id: "wf-invoice",
  name: "Invoice intake",
  mode: "coaching",
};

export const learningWorkflow: WorkflowMetrics = {
  ...snapshot({
    decisions: 12,
    suggestions: 12,
    accepted: 9,
    rejected: 1,
    corrected: 2,
    acceptance_rate: 0.75,
    rolling_acceptance_rate: 0.75,
    confidence: 0.4677,
    decision_latency_ms: { p50: 850, p90: 12_000 },
    level: "COACHING",
    window_decisions: 12,
    to_auto: { decisions_to_coaching: 0, window_decisions_needed: 8, acceptance_gap: 0.1, auto_min_window: 20, auto_acceptance: 0.85 },
  }),
  workflow_id: "wf-refund",
  name: "Refund request",
  mode: "coaching",
};

export const series: SeriesPoint[] = [
  { bucket: "2026-11-21T09:00:00+00:00", decisions: 10, accepted: 6, rejected: 1, corrected: 3, manual: 0, skipped: 0, acceptance_rate: 0.6, latency_ms_avg: 2400 },
  { bucket: "2026-11-22T14:00:00+00:00", decisions: 26, accepted: 25, rejected: 1, corrected: 0, manual: 0, skipped: 0, acceptance_rate: 0.9615, latency_ms_avg: 800 },
];

export const globalMetrics: GlobalMetrics = {
  ...totals({
    decisions: 36,
    accepted: 31,
    rejected: 2,
    corrected: 3,
    acceptance_rate: 0.8611,
    rolling_acceptance_rate: 0.8611,
    confidence: 0.7133,
    decision_latency_ms: { p50: 880, p90: 4200 },
  }),
  workflows: 2,
  levels: { AUTO: 1, COACHING: 1 },
  auto_ready_workflows: 1,
  series,
};

export const operators: OperatorMetrics[] = [
  { ...totals({ decisions: 20, accepted: 18, corrected: 2, acceptance_rate: 0.9, decision_latency_ms: { p50: 700, p90: 1500 } }), operator: "ann@example.com" },
  { ...totals({ decisions: 16, accepted: 13, corrected: 1, rejected: 2, acceptance_rate: 0.8125, decision_latency_ms: { p50: 1200, p90: 3000 } }), operator: "bob@example.com" },
];

export const pack: CorrectionPack = {
  id: "pack-mail",
  workflow_id: "wf-invoice",
  step_id: "mail",
  enabled: true,
  corrections: 4,
  changes: [
    { field: "to", before: "a@example.com", after: "b@example.com", count: 4 },
    { field: "cc", before: { $missing: true }, after: "boss@example.com", count: 1 },
  ],
  field_corrections: {},
  rules: [{ field: "to", before: "a@example.com", after: "b@example.com", count: 4, share: 1, since: null }],
  rules_changed_at: null,
  last_rule_change: null,
  discounted: 0,
  created_at: "2026-11-22T10:00:00+00:00",
  updated_at: "2026-11-22T11:00:00+00:00",
};

export const otherPack: CorrectionPack = {
  id: "pack-refund",
  workflow_id: "wf-refund",
  step_id: "pay",
  enabled: false,
  corrections: 2,
  changes: [{ field: "amount", before: 10, after: 12, count: 1 }],
  field_corrections: {},
  rules: [],
  rules_changed_at: null,
  last_rule_change: null,
  discounted: 0,
  created_at: "2026-11-21T09:00:00+00:00",
  updated_at: "2026-11-21T09:00:00+00:00",
};

/** Renders a lead page with the live connection (a FakeSocket, see src/test/setup.ts), signed in as `role`. */
export function renderLive(element: ReactElement, route: string, path: string, role = "lead") {
  return renderPage(
    <AsRole role={role}>
      <RealtimeProvider workspaceId="1">{element}</RealtimeProvider>
    </AsRole>,
    { route, path },
  );
}
