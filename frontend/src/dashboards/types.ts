/**
 * Shapes of the lead-side API (metrics, correction packs, audit, workflow
 * definitions) as the dashboards read them — see api/metrics.py,
 * api/correction_packs.py, api/audit.py and api/workflows.py. The metrics
 * shapes are in ../api/metrics, shared with the operator side.
 */
import type { components } from "../api/schema";
import type { Workflow } from "../api/types";

export interface ItemList<T> {
  items: T[];
}

/** A JSON value in a pack; `{"$missing": true}` stands for a field that is absent. */
export type PackValue = unknown;

export interface PackChange {
  field: string;
  before: PackValue;
  after: PackValue;
  count: number;
}

export interface LearnedRule extends PackChange {
  /** count / the step's corrections of this field. */
  share: number;
  /** When the rule started applying (ISO 8601); null while the pack is disabled or when not known. */
  since?: string | null;
}

/** A rule as a rule change names it. */
export type RuleRef = Pick<PackChange, "field" | "before" | "after">;

/** The last time a pack's learned rules started or stopped applying. */
export interface RuleChange {
  at: string;
  started: RuleRef[];
  stopped: RuleRef[];
}

/** `correction_pack_changed`, pushed to the workspace when a learned rule starts or stops applying. */
export interface PackChangedEvent {
  pack_id: string;
  workflow_id: string;
  step_id: string;
  enabled: boolean;
  cause: "correction" | "enabled" | "disabled" | "import";
  rules_changed_at: string;
  started: LearnedRule[];
  stopped: LearnedRule[];
  rules: LearnedRule[];
}

export interface CorrectionPack {
  id: string;
  workflow_id: string;
  step_id: string;
  enabled: boolean;
  corrections: number;
  changes: PackChange[];
  rules: LearnedRule[];
  /** Per field, the corrections that changed it: a change's consistency is judged among them. */
  field_corrections?: Record<string, number>;
  rules_changed_at?: string | null;
  last_rule_change?: RuleChange | null;
  /** Corrections taken back out because their step then failed because of them: they count towards no rule. */
  discounted?: number;
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

/** An event of the workspace's audit log (`GET /api/audit`). */
export type AuditEvent = components["schemas"]["AuditEvent"];

/** What `GET /api/audit/verify` answers: the hash chain intact, or where it first fails. */
export type AuditVerifyResult = components["schemas"]["Verify"];

/** The facts of a step the definition view shows, whatever its type (docs/workflow-definitions.md). */
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

/** `GET /api/workflows/<id>?version=`: its steps are typed by the definition format (one schema per step type). */
export type WorkflowDefinition = Workflow;
