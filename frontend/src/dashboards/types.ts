/**
 * Shapes of the lead-side API (metrics, correction packs, audit, workflow
 * definitions) as the dashboards read them — see api/metrics.py,
 * api/correction_packs.py, api/audit.py and api/workflows.py.
 */

/** What the evidence says (DESIGN.md §3); the server may add levels later. */
export type Level = "OBSERVATION" | "COACHING" | "AUTO" | (string & {});

/** What a lead chose. */
export type WorkflowMode = "coaching" | "auto" | (string & {});

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

/** One scope's counters and rates (a workflow, a step, an operator, the workspace). */
export interface MetricsSnapshot {
  decisions: number;
  suggestions: number;
  accepted: number;
  rejected: number;
  corrected: number;
  manual: number;
  skipped: number;
  acceptance_rate: number;
  rolling_acceptance_rate: number;
  /** 95% Wilson lower bound of the rolling acceptance. */
  confidence: number;
  decision_latency_ms: Latency;
  level: Level;
  auto_ready: boolean;
  window_size: number;
  window_decisions: number;
  to_auto?: ToAuto;
}

/** One hourly bucket of a time series. */
export interface SeriesPoint {
  bucket: string;
  decisions: number;
  accepted: number;
  rejected: number;
  corrected: number;
  manual: number;
  skipped: number;
  acceptance_rate: number;
  latency_ms_avg: number | null;
}

/** An item of `GET /api/metrics/workflows`, and (with the detail fields) `GET /api/metrics/workflows/<id>`. */
export interface WorkflowMetrics extends MetricsSnapshot {
  workflow_id: string;
  name: string;
  mode: WorkflowMode;
  steps?: Record<string, MetricsSnapshot>;
  current_version?: MetricsSnapshot & { version: number };
  spot_checks?: MetricsSnapshot;
  series?: SeriesPoint[];
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

export interface ItemList<T> {
  items: T[];
}

/** `workflow_level_changed` (DESIGN.md §5). */
export interface LevelChangedEvent {
  workflow_id: string;
  level: Level;
  previous_level?: Level;
  auto_ready?: boolean;
  mode?: WorkflowMode;
  previous_mode?: WorkflowMode;
  reason?: string;
}

/** `metrics_update`: the workflow's new snapshot. */
export type MetricsUpdateEvent = MetricsSnapshot & { workflow_id: string };

/** A JSON value in a pack; `{"$missing": true}` stands for a field that is absent. */
export type PackValue = unknown;

export interface PackChange {
  field: string;
  before: PackValue;
  after: PackValue;
  count: number;
}

export interface LearnedRule extends PackChange {
  /** count / the step's corrections. */
  share: number;
}

export interface CorrectionPack {
  id: string;
  workflow_id: string;
  step_id: string;
  enabled: boolean;
  corrections: number;
  changes: PackChange[];
  rules: LearnedRule[];
  created_at?: string;
  updated_at?: string;
}

/** `GET /api/correction-packs/<id>/export`, the body `POST /api/correction-packs/import` takes. */
export interface PackExport {
  format: string;
  workflow_id: string;
  step_id: string;
  enabled?: boolean;
  stats: { corrections: number; groups: PackChange[] };
}

export interface AuditEvent {
  id: number;
  seq: number;
  actor: string;
  action: string;
  target_type: string;
  target_id: string | null;
  execution_id: string | null;
  before: unknown;
  after: unknown;
  result: string;
  created_at: string;
}

export interface AuditVerifyResult {
  ok: boolean;
  checked: number;
  first_bad_seq?: number;
  reason?: string;
}

/** A step of a workflow definition (DESIGN.md §1); the engine allows more fields. */
export interface WorkflowStepDefinition {
  id: string;
  name?: string;
  type?: string;
  tool?: string;
  params?: Record<string, unknown>;
  depends_on?: string[] | string;
  when?: string;
  condition?: string;
  timeout_s?: number;
  retries?: number;
  on_reject?: string;
  requires_clarification?: boolean;
  clarification_question?: string;
  [more: string]: unknown;
}

/** `GET /api/workflows/<id>?version=`. */
export interface WorkflowDefinition {
  id: string;
  version: number;
  latest_version: number;
  name: string;
  description?: string;
  variables?: Record<string, unknown>;
  steps: WorkflowStepDefinition[];
  level: Level;
  mode: WorkflowMode;
  auto_ready?: boolean;
  thresholds?: Record<string, number>;
  created_at?: string;
  updated_at?: string;
}
