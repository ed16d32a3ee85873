/**
 * Shapes of approvals and policy verdicts (DESIGN.md §4): what GET /api/approvals,
 * the approval_requested / approval_decided events and POST /api/policies/evaluate answer.
 */
import type { Page } from "../api/types";

export type PolicyEffect = "allow" | "require_review" | "deny";

/** A rule as a verdict names it. */
export interface VerdictRule {
  id: string | null;
  name: string;
  scope: string;
  order?: number;
  reason?: string;
  /** The rule failed and was taken as require_review (fail closed). */
  error?: string;
}

/** A rule that matched too but lost, and why. */
export interface LosingRule extends VerdictRule {
  effect: PolicyEffect;
  lost_because: string;
}

/** The policy's verdict on one call, with its explanation. */
export interface PolicyVerdict {
  effect: PolicyEffect;
  /** No rule matched: the workspace default for the tool's risk. */
  default: boolean;
  rule: VerdictRule | null;
  matched: LosingRule[];
  risk?: string | null;
  revision?: number;
  /** gateway: the corrected arguments the tool's accepted learned rules suggest (its correction pack) */
  learned?: LearnedSuggestion | null;
}

/** What a gateway tool's accepted learned rules make of a held call's arguments: the suggested edit. */
export interface LearnedSuggestion {
  pack_id: string;
  params: Record<string, unknown>;
  /** "reason: 'late' → 'lost'" */
  text: string;
  rules: { field: string; before: unknown; after: unknown; count: number; share: number }[];
}

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
  execution?: { execution_id: string; status: string; step_id?: string | null };
}
