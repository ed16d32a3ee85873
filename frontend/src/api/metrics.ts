/**
 * Shapes of the metrics API (api/metrics.py, docs/design.md#metrics-and-learning-levels "Shapes"): levels,
 * modes, a scope's counters and rates, how far it is from AUTO-ready, and the
 * metrics events (docs/api.md#real-time-socketio). Read by the operator side (the stats panel)
 * and the lead side (dashboards) alike, with the one request both make.
 */
import { apiGet } from "./client";
import type { components } from "./schema";

type Schemas = components["schemas"];

/** What the evidence says (docs/design.md#metrics-and-learning-levels). */
export type Level = Schemas["Workflow"]["level"];

/** What a lead chose. */
export type WorkflowMode = Schemas["Workflow"]["mode"];

/** A step's own mode: `coaching` follows the workflow, `auto` runs unattended with spot checks, `always_review` is pinned. */
export type StepMode = Schemas["StepModeArgs"]["mode"];

/** A step's metrics (the same tests as a workflow's), its own mode and its spot checks. */
export interface StepMetrics extends MetricsSnapshot {
  mode: StepMode;
  spot_checks?: MetricsSnapshot;
}

export interface Latency {
  p50: number | null;
  p90: number | null;
}

/** How far a scope is from AUTO-ready. */
export interface ToAuto {
  decisions_to_coaching: number;
  window_decisions_needed: number;
  acceptance_gap: number;
  auto_min_window: number;
  auto_acceptance: number;
}

/** The AUTO readiness test (docs/autonomy.md): an e-value that must reach 1/auto_alpha. */
export interface Evidence {
  /** log of the e-value */
  statistic: number;
  /** 1/auto_alpha */
  threshold: number;
  /** more accepts in a row that would make the scope AUTO-ready; null when none would */
  decisions_needed_if_all_accepted: number | null;
  test: string;
  e_value?: number;
  accepted_since_restart?: number;
  counted_since_restart?: number;
}

/** How many decisions of each kind a scope or a time bucket counts. */
export interface DecisionCounts {
  decisions: number;
  accepted: number;
  rejected: number;
  corrected: number;
  manual: number;
  skipped: number;
  acceptance_rate: number;
}

/** One scope's counters and rates (a workflow, a step, an operator, the workspace). */
export interface MetricsSnapshot extends DecisionCounts {
  suggestions: number;
  rolling_acceptance_rate: number;
  /** 95% Wilson lower bound of the rolling acceptance. */
  confidence: number;
  decision_latency_ms: Latency;
  level: Level;
  auto_ready: boolean;
  window_size: number;
  window_decisions: number;
  to_auto?: ToAuto;
  evidence?: Evidence;
  /** decisions, all accepted, before AUTO-ready by every bar (0: ready; null: none would now) */
  decisions_needed?: number | null;
  /** the decisions in the readiness test since it last restarted (docs/autonomy.md#check-suggestions) */
  evidence_decisions?: number;
  /** of those, the decisions by operators who were attentive when they decided */
  attentive_decisions?: number;
}

/** One hourly bucket of a time series. */
export interface SeriesPoint extends DecisionCounts {
  bucket: string;
  latency_ms_avg: number | null;
}

/** An item of `GET /api/metrics/workflows`, and (with the detail fields) `GET /api/metrics/workflows/<id>`. */
export interface WorkflowMetrics extends MetricsSnapshot {
  workflow_id: string;
  name: string;
  mode: WorkflowMode;
  steps?: Record<string, StepMetrics>;
  current_version?: MetricsSnapshot & { version: number };
  spot_checks?: MetricsSnapshot;
  series?: SeriesPoint[];
  /** the detail only: `attentive` when only attentive reviewers' decisions count in the readiness tests */
  evidence_from?: "all" | "attentive";
}

export interface GlobalMetrics extends MetricsSnapshot {
  workflows: number;
  levels: Record<string, number>;
  auto_ready_workflows: number;
  series: SeriesPoint[];
}

export interface OperatorMetrics extends MetricsSnapshot {
  operator: string;
}

/** `workflow_level_changed` (docs/api.md#real-time-socketio). */
export interface LevelChangedEvent {
  workflow_id: string;
  /** set when the change is one step's (its level, or its own mode) */
  step_id?: string;
  /** the workflow's mode, on a step's change */
  workflow_mode?: WorkflowMode;
  level: Level;
  previous_level?: Level;
  auto_ready?: boolean;
  mode?: WorkflowMode;
  previous_mode?: WorkflowMode;
  reason?: string;
}

/** `metrics_update`: the workflow's new snapshot. */
export type MetricsUpdateEvent = MetricsSnapshot & { workflow_id: string };

/**
 * The query key of a workflow's metrics: one cache entry that the coaching
 * panel and the dashboards both read and refresh (and under `["metrics"]`,
 * which the dashboards invalidate as a whole).
 */
export const workflowMetricsKey = (workflowId: string) => ["metrics", "workflow", workflowId] as const;

/** `GET /api/metrics/workflows/<id>`. */
export const fetchWorkflowMetrics = (workflowId: string, signal?: AbortSignal) =>
  apiGet<WorkflowMetrics>(`/api/metrics/workflows/${encodeURIComponent(workflowId)}`, { signal });
