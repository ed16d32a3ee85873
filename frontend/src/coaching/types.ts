/**
 * Shapes of the coaching API (DESIGN.md §1–§5) as the operator side reads
 * them: suggestions, the queue, decisions, session stats. The workflow
 * metrics shapes are in ../api/metrics, shared with the lead side.
 */
import type { Execution, ExecutionStep, Page } from "../api/types";
import type { PolicyVerdict } from "../approvals/types";

/** The five decisions (DESIGN.md §2). */
export type DecisionKind = "accept" | "reject" | "correct" | "manual" | "skip";

export const DECISION_KINDS: readonly DecisionKind[] = ["accept", "reject", "correct", "manual", "skip"];

/** A JSON Schema, as loose as the tools write them. */
export type JsonSchema = Record<string, unknown>;

/** What Coach proposes for one step (REST and the `coaching_suggestion` event). */
export interface Suggestion {
  suggestion_id: string;
  execution_id: string;
  workflow_id: string;
  workflow_version?: number;
  step_id: string;
  step_name?: string;
  tool: string | null;
  params: unknown;
  definition_params?: unknown;
  /** The tool's JSON Schema for its params. */
  params_schema?: JsonSchema | null;
  risk?: string | null;
  rationale?: string;
  confidence: number;
  /** `definition`, `correction_pack:<id>` or `llm`. */
  source: string;
  status: string;
  version: number;
  /** `coaching`, `spot_check`, or `correction` after a reject. */
  purpose?: string;
  /** The policy's verdict on the suggested call (null: none applies, e.g. no tool). */
  policy?: PolicyVerdict | null;
  created_at: string;
  /** When nobody deciding sets off `on_timeout` (ISO); null: no deadline, or the session is paused. */
  deadline?: string | null;
  /** What the deadline does: `skip`, `fail`, `accept`… */
  on_timeout?: string | null;
  /** `step`, or `tool_call`: a call an agent step's LLM asked for (params: its arguments; rationale: what it said). */
  kind?: "step" | "tool_call" | (string & {});
  /** tool_call: the call's id, as the LLM named it. */
  tool_call_id?: string | null;
}

export const isToolCall = (s: Pick<Suggestion, "kind"> | null | undefined) => s?.kind === "tool_call";

/** One row of `GET /api/coaching/queue`. */
export interface QueueItem extends Suggestion {
  workflow_name: string;
  execution_status: string;
  execution_mode: string;
  /** The run's variables, so two runs of one workflow can be told apart. */
  variables?: Record<string, unknown>;
}

/** `GET /api/coaching/questions`: an execution waiting for a person's answer. */
export interface Question {
  execution_id: string;
  workflow_id: string;
  workflow_name: string;
  step_id: string;
  step_name: string;
  kind: "human_input" | "clarification" | (string & {});
  question: string | null;
  paused_at: string | null;
  deadline: string | null;
  on_timeout: string | null;
  variables: Record<string, unknown>;
  execution_mode: string;
  waiting_since: string;
}

export type QueuePage = Page<QueueItem>;

/** `GET /api/executions/<id>/coaching/suggestion`, and the pause/resume answers. */
export interface PendingSuggestions {
  execution_id: string;
  status: string;
  paused: boolean;
  suggestion: Suggestion | null;
  suggestions: Suggestion[];
}

/** The coaching session's counters (`GET .../coaching/stats`, `coaching_stats`, a decision's ack). */
export interface CoachingStats {
  suggestions_made: number;
  accepted: number;
  rejected: number;
  corrected: number;
  manual_executions: number;
  skipped: number;
  /** Suggestions whose deadline passed with nobody deciding (no operator's decision). */
  timed_out?: number;
}

/** The `execution_update` event (DESIGN.md §5). */
export interface ExecutionUpdate {
  execution_id: string;
  status: string;
  progress?: Execution["progress"];
  step_id?: string | null;
  /** The steps changed since the previous push, each as the REST detail shows a step's state (not its definition). */
  steps?: PushedStep[];
  /** The execution's gate, as the REST detail shows it (sent with `steps`). */
  gate?: Execution["gate"];
}

/** A step's state in an `execution_update`: the REST detail's step less what its definition says (name, tool…). */
export type PushedStep = Pick<CoachingStep, "step_id" | "status" | "output" | "error" | "params" | "decision" | "policy"> &
  Record<string, unknown>;

/** A step as `GET /api/executions/<id>` describes it, with the fields the timeline shows. */
export interface CoachingStep extends ExecutionStep {
  name?: string;
  type?: string | null;
  tool?: string | null;
  params?: unknown;
  decision?: string | null;
  error?: string | null;
  /** The policy's verdict on the step's call. */
  policy?: PolicyVerdict | null;
  /** The step's latest approval. */
  approval?: { approval_id: string; status: string; kind: string } | null;
}

export interface CoachingExecution extends Omit<Execution, "steps"> {
  steps: CoachingStep[];
}

/** The body of a decision (REST and the `coaching_decision` event). */
export interface DecisionRequest {
  suggestion_id: string;
  decision: DecisionKind;
  /** `correct`: the corrected params, checked against the tool's schema. */
  correction?: Record<string, unknown>;
  feedback?: string;
  /** `manual`: what the operator's hand-made result was. */
  manual_output?: unknown;
}

export interface DecisionResult {
  ok: boolean;
  decision?: { decision_id: string; suggestion_id: string; decision: DecisionKind; operator: string };
  execution?: ExecutionUpdate;
  stats?: CoachingStats;
}
