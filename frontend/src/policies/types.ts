/** Shapes of /api/policies (README "Policies", docs/api.md). */
import type { PolicyEffect } from "../approvals/types";

export type OneOrMany = string | string[];

export interface PolicyMatch {
  tool?: OneOrMany | null;
  step_type?: OneOrMany | null;
  risk?: OneOrMany | null;
  workflow_id?: OneOrMany | null;
  user?: OneOrMany | null;
  agent_step?: OneOrMany | null;
  /** The MCP gateway's agent identity (its name) making the call; `*`: any agent. */
  agent?: OneOrMany | null;
  /** `not_read`: the call's `query` is not a read-only statement; `read`: it is. */
  sql?: string | null;
  host_not_in?: string[] | null;
  path_outside?: string | null;
  /** A predicate in the condition language, e.g. `params.amount > 1000`. */
  params?: string | null;
}

export interface PolicyScope {
  workflow_id?: string | null;
  user?: string | null;
}

/** What a `confirm` rule falls back to where nobody at the agent can be asked. */
export type PolicyFallback = "require_review" | "deny";
export const FALLBACKS: readonly PolicyFallback[] = ["require_review", "deny"];

/** The body of POST/PUT /api/policies. */
export interface PolicyRuleIn {
  name: string;
  order: number;
  effect: PolicyEffect;
  /** A `confirm` rule's (require_review by default); null or absent for the other effects. */
  fallback?: PolicyFallback | null;
  reason: string;
  enabled: boolean;
  scope: PolicyScope;
  match: PolicyMatch;
}

export interface PolicyRule extends PolicyRuleIn {
  id: string;
  revision: number;
  created_by?: string;
  created_at?: string;
  updated_at?: string;
}

export interface PolicyList {
  items: PolicyRule[];
  revision: number;
}

export const RISKS = ["read", "write", "external", "destructive"] as const;
export type Risk = (typeof RISKS)[number];
export type PolicyDefaults = Record<Risk, PolicyEffect>;

export const EFFECTS: readonly PolicyEffect[] = ["allow", "require_review", "deny", "confirm"];
/** A workspace default's effects: `confirm` is a rule's only (it needs a rule's match and fallback). */
export const DEFAULT_EFFECTS: readonly PolicyEffect[] = ["allow", "require_review", "deny"];
export const STEP_TYPES = ["action", "decision", "validation", "approval", "human_input", "agent"] as const;

/** The body of POST /api/policies/evaluate. */
export interface EvaluateRequest {
  tool: string;
  params: Record<string, unknown>;
  step_type: string;
  workflow_id: string | null;
  user: string | null;
  agent_step: string | null;
}
