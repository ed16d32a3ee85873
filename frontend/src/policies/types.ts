/** Shapes of /api/policies (README "Policies", docs/api.md). */
import type { PolicyEffect } from "../approvals/types";
import type { components } from "../api/schema";

export type OneOrMany = string | string[];

type Schemas = components["schemas"];

/** What a rule matches: every key optional, all those given must hold (checked by the server, which names the key). */
export type PolicyMatch = Schemas["Match"];

/** Where a rule applies: a workflow, a user, both, or the workspace (none). */
export type PolicyScope = Schemas["Scope"];

/** What a `confirm` rule falls back to where nobody at the agent can be asked. */
export type PolicyFallback = "require_review" | "deny";
export const FALLBACKS: readonly PolicyFallback[] = ["require_review", "deny"];

/** The body of POST/PUT /api/policies. */
export type PolicyRuleIn = Schemas["PolicyIn"];

/** A rule as the server answers it: the body's fields, all there, with its id, revision and dates. */
export type PolicyRule = Schemas["PolicyOut"];

/** `GET /api/policies`: the rules in precedence order, and the workspace's policy revision. */
export type PolicyList = Schemas["PolicyList"];

export const RISKS = ["read", "write", "external", "destructive"] as const;
export type Risk = (typeof RISKS)[number];
/** The workspace's default effect for each risk. */
export type PolicyDefaults = Schemas["DefaultsOut"];

export const EFFECTS: readonly PolicyEffect[] = ["allow", "require_review", "deny", "confirm"];
/** A workspace default's effects: `confirm` is a rule's only (it needs a rule's match and fallback). */
export const DEFAULT_EFFECTS: readonly PolicyEffect[] = ["allow", "require_review", "deny"];
export type StepType = NonNullable<EvaluateRequest["step_type"]>;
export const STEP_TYPES = ["action", "decision", "validation", "approval", "human_input", "agent"] as const satisfies readonly StepType[];

/** Whether `value` (a select's) is a step type. */
export const isStepType = (value: string): value is StepType => (STEP_TYPES as readonly string[]).includes(value);

/** The body of POST /api/policies/evaluate. */
export type EvaluateRequest = Schemas["EvaluateIn"];

/** Body of `POST /api/policies/replay`: the rule being written and where to replay it (none: its scope's workflow, or the workspace's calls). */
export type PolicyReplayRequest = Schemas["PolicyReplayIn"];
