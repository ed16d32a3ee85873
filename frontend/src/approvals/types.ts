/**
 * Shapes of approvals and policy verdicts (docs/api.md): what GET /api/approvals,
 * the approval_requested / approval_decided events and POST /api/policies/evaluate answer.
 */
import type { Page } from "../api/types";
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

export type ApprovalKind = "step" | "tool_call" | "plan" | "gateway";

/** Kinds whose params a reviewer may edit: a step's tool call, and an outside agent's call held by the MCP gateway. */
export const EDITABLE_KINDS: readonly ApprovalKind[] = ["tool_call", "gateway"];
export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired";

export interface ApprovalDecision {
  user: string;
  /** approve | reject | edit, or expire (cancel, timeout). */
  decision: string;
  comment?: string;
  at: string;
}

export interface Approval {
  approval_id: string;
  /** null for a gateway call's review: it belongs to no execution. */
  execution_id: string | null;
  /** gateway: the agent identity that made the call. */
  agent?: string | null;
  step_id: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  message: string;
  tool: string | null;
  params: unknown;
  policy: PolicyVerdict | null;
  approvers: { roles: string[]; users: string[] };
  quorum: number;
  /** Distinct approvals counted so far. */
  approvals?: number;
  separate_duties: boolean;
  /** The user id of whoever started the execution. */
  started_by?: string | null;
  decisions: ApprovalDecision[];
  deadline: string | null;
  timeout_s?: number | null;
  on_timeout: "approve" | "reject" | "fail";
  created_at: string;
  decided_at?: string | null;
}

export type ApprovalPage = Page<Approval>;

export type ApprovalDecisionKind = "approve" | "reject" | "edit";

export interface ApprovalDecisionRequest {
  decision: ApprovalDecisionKind;
  comment?: string | null;
  /** edit only: the params the tool runs with. */
  params?: Record<string, unknown>;
}

export interface ApprovalDecisionResult {
  approval: Approval;
  execution?: {
    execution_id: string;
    status: string;
    step_id?: string | null;
    /** `held`: the decision is held for the undo window until `deadline` (docs/web-app.md "Undo") */
    gate?: { kind?: string; approval_id?: string; decision?: string; deadline?: string | null } | null;
  } | null;
}
