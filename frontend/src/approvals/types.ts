/**
 * Shapes of approvals and policy verdicts (docs/api.md): what GET /api/approvals,
 * the approval_requested / approval_decided events and POST /api/policies/evaluate answer.
 */
import type { components } from "../api/schema";

type Schemas = components["schemas"];

/** The policy's verdict on one call, with its explanation (generated from the server's document). */
export type PolicyVerdict = Schemas["Verdict"];
export type PolicyEffect = PolicyVerdict["effect"];
/** A rule as a verdict names it. */
export type VerdictRule = Schemas["RuleRef"];
/** A rule that matched too but lost, and why. */
export type LosingRule = Schemas["MatchedRule"];

/** What a gateway tool's accepted learned rules make of a held call's arguments: the suggested edit. */
export type LearnedSuggestion = Schemas["LearnedSuggestion"];

export type ApprovalKind = Schemas["Approval"]["kind"];

/** Kinds whose params a reviewer may edit: a step's tool call, and an outside agent's call held by the MCP gateway. */
export const EDITABLE_KINDS: readonly ApprovalKind[] = ["tool_call", "gateway"];
export type ApprovalStatus = Schemas["Approval"]["status"];

/** One person's decision on an approval: approve | reject | edit, or expire (cancel, timeout). */
export type ApprovalDecision = Schemas["ApprovalDecision"];

/** An approval as `GET /api/approvals` and its events give it; `execution_id` is null for a gateway call's review. */
export type Approval = Schemas["Approval"];

export type ApprovalPage = Schemas["ApprovalPage"];

export type ApprovalDecisionKind = ApprovalDecisionRequest["decision"];

/** Body of `POST /api/approvals/<id>`; `params` (edit only) are the params the tool runs with. */
export type ApprovalDecisionRequest = Schemas["ApprovalDecisionArgs"];

/** What deciding and undoing answer; the execution's gate is `held` while the decision waits for its undo window
 * (docs/web-app.md "Undo"). */
export type ApprovalDecisionResult = Schemas["ApprovalDecisionResult"];
