/**
 * Shapes of the coaching API (docs/design.md and docs/api.md) as the operator side reads
 * them: suggestions, the queue, decisions, session stats. The workflow
 * metrics shapes are in ../api/metrics, shared with the lead side.
 */
import type { Execution, ExecutionStep } from "../api/types";
import type { components } from "../api/schema";

type Schemas = components["schemas"];

/** The five decisions (docs/design.md#decisions). */
export type DecisionKind = Schemas["DecisionRecord"]["decision"];

export const DECISION_KINDS: readonly DecisionKind[] = ["accept", "reject", "correct", "manual", "skip"];

/** A JSON Schema, as loose as the tools write them. */
export type JsonSchema = Record<string, unknown>;

/** What Coach proposes for one step (REST and the `coaching_suggestion` event). */
export type Suggestion = Schemas["Suggestion"];

export const isToolCall = (s: Pick<Suggestion, "kind"> | null | undefined) => s?.kind === "tool_call";

/** What the operator calls a suggestion's step: its name, else its id. */
export const stepName = (s: Pick<Suggestion, "step_name" | "step_id">) => s.step_name || s.step_id;

/** What the panel and the queue say after an action: an error (an alert) or information (a status). */
export type FlashNotice = { tone: "error" | "info"; text: string };

/** One row of `GET /api/coaching/queue`. */
export type QueueItem = Schemas["QueueItem"];

/** `GET /api/coaching/questions`: an execution waiting for a person's answer. */
export type Question = Schemas["Question"];

export type QueuePage = Schemas["QueuePage"];

/** `GET /api/executions/<id>/coaching/suggestion`, and the pause/resume answers. */
export type PendingSuggestions = Schemas["Pending"];

/** `POST .../coaching/undo` and the socket's `coaching_undo`: the suggestion, pending again. */
export type UndoResult = Schemas["UndoResult"];

/** The coaching session's counters (`GET .../coaching/stats`, `coaching_stats`, a decision's ack). */
export type CoachingStats = Schemas["Stats"];

/**
 * The `execution_update` event (docs/api.md#real-time-socketio): where the execution stands, as a decision's answer says it, and the
 * steps changed since the previous push, each as the REST detail shows a step's state (not its definition).
 */
export type ExecutionUpdate = Schemas["ExecutionUpdate"] & { steps?: PushedStep[] };

/** A step's state in an `execution_update`: the REST detail's step less what its definition says (name, tool…). */
export type PushedStep = Pick<CoachingStep, "step_id" | "status" | "output" | "error" | "params" | "decision" | "policy"> &
  Record<string, unknown>;

/** A step as `GET /api/executions/<id>` describes it. */
export type CoachingStep = ExecutionStep;

export type CoachingExecution = Execution;

/** The body of a decision (REST and the `coaching_decision` event). */
export type DecisionRequest = Schemas["DecisionArgs"];

export type DecisionResult = Schemas["DecisionResult"];
