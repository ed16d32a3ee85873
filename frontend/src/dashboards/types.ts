/**
 * Shapes of the lead-side API (metrics, correction packs, audit, workflow
 * definitions) as the dashboards read them — see api/metrics.py,
 * api/correction_packs.py, api/audit.py and api/workflows.py. The metrics
 * shapes are in ../api/metrics, shared with the operator side.
 */
import type { components } from "../api/schema";
import type { Workflow } from "../api/types";

type Schemas = components["schemas"];

export interface ItemList<T> {
  items: T[];
}

/** A JSON value in a pack; `{"$missing": true}` stands for a field that is absent. */
export type PackValue = unknown;

/** A change (field, before → after) the step's corrections made, and how often. */
export type PackChange = Schemas["ChangeGroup"];

/** A change that became a rule later suggestions apply; `since` is null while the pack is disabled or when not known. */
export type LearnedRule = Schemas["LearnedRule"];

/** A learned rule as a rule change names it. */
export type LearnedRuleRef = Schemas["LearnedRuleRef"];

/** The last time a pack's learned rules started or stopped applying. */
export type RuleChange = Schemas["RuleChange"];

/** A learned rule as the socket event names it: without `since` (not in the OpenAPI document, the event says when). */
export type PackEventRule = Omit<LearnedRule, "since">;

/** `correction_pack_changed`, pushed to the workspace when a learned rule starts or stops applying. */
export interface PackChangedEvent {
  pack_id: string;
  workflow_id: string;
  step_id: string;
  enabled: boolean;
  cause: "correction" | "enabled" | "disabled" | "import";
  rules_changed_at: string;
  started: PackEventRule[];
  stopped: PackEventRule[];
  rules: PackEventRule[];
}

/** A step's correction pack (`GET /api/correction-packs`): what its operators' corrections taught it. */
export type CorrectionPack = Schemas["Pack"];

/** `GET /api/correction-packs/<id>/export`, the body `POST /api/correction-packs/import` takes. */
export type PackExport = Schemas["PackExport"];

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
