/**
 * Shapes of the metrics API (api/metrics.py, docs/design.md#metrics-and-learning-levels "Shapes"): levels,
 * modes, a scope's counters and rates, how far it is from AUTO-ready, and the
 * metrics events (docs/api.md#real-time-socketio). Read by the operator side (the stats panel)
 * and the lead side (dashboards) alike, with the one request both make.
 */
import { api, unwrap } from "./typed";
import type { components } from "./schema";

type Schemas = components["schemas"];

/** What the evidence says (docs/design.md#metrics-and-learning-levels). */
export type Level = Schemas["Workflow"]["level"];

/** What a lead chose. */
export type WorkflowMode = Schemas["Workflow"]["mode"];

/** A step's own mode: `coaching` follows the workflow, `auto` runs unattended with spot checks, `always_review` is pinned. */
export type StepMode = Schemas["StepModeArgs"]["mode"];

/** A step's metrics (the same tests as a workflow's), its own mode and its spot checks. */
export type StepMetrics = Schemas["StepMetrics"];

export type Latency = Schemas["Latency"];

/** How far a scope is from AUTO-ready. */
export type ToAuto = Schemas["ToAuto"];

/** The AUTO readiness test (docs/autonomy.md): an e-value that must reach 1/auto_alpha. */
export type Evidence = Schemas["Evidence"];

/** A scope that learns (a workflow, a step, a tool): its counters and rates, its level and readiness test. */
export type MetricsSnapshot = Schemas["Snapshot"];

/** Counters and rates alone: what every snapshot has, and all the workspace's and an operator's totals have. */
export type MetricsTotals = Omit<Schemas["OperatorMetrics"], "operator" | "series">;

/** One hourly bucket of a time series. */
export type SeriesPoint = Schemas["SeriesPoint"];

/** How many decisions of each kind a scope or a time bucket counts. */
export type DecisionCounts = Pick<SeriesPoint, "decisions" | "accepted" | "rejected" | "corrected" | "manual" | "skipped" | "acceptance_rate">;

/** An item of `GET /api/metrics/workflows`, and (with the detail fields) `GET /api/metrics/workflows/<id>`. */
export type WorkflowMetrics = Schemas["WorkflowMetrics"];

export type GlobalMetrics = Schemas["Global"];

export type OperatorMetrics = Schemas["OperatorMetrics"];

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
  unwrap(api.GET("/api/metrics/workflows/{workflow_id}", { params: { path: { workflow_id: workflowId } }, signal }));
