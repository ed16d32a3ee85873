/** Shapes for the coaching component tests: a suggestion, an execution, stats, metrics, the queue. */
import type {
  CoachingExecution,
  CoachingStats,
  PendingSuggestions,
  QueueItem,
  Suggestion,
} from "./types";
import type { WorkflowMetrics } from "../api/metrics";

export const ECHO_SCHEMA = { type: "object" };

export const FILE_READ_SCHEMA = {
  type: "object",
  properties: {
    path: { type: "string", minLength: 1 },
    encoding: { type: "string", minLength: 1 },
    max_bytes: { type: "integer", minimum: 1 },
  },
  required: ["path"],
  additionalProperties: false,
};

export function suggestion(overrides: Partial<Suggestion> = {}): Suggestion {
  return {
    suggestion_id: "sug-1",
    execution_id: "ex-1",
    workflow_id: "wf-1",
    workflow_version: 1,
    step_id: "greet",
    step_name: "Greet the customer",
    tool: "echo",
    params: { message: "hi Ada", count: 2 },
    definition_params: { message: "hi Ada", count: 2 },
    params_schema: ECHO_SCHEMA,
    risk: "read",
    rationale: "Step 'Greet the customer' runs echo with these params.",
    confidence: 0.62,
    source: "definition",
    status: "pending",
    version: 1,
    purpose: "coaching",
    kind: "step",
    created_at: new Date(Date.now() - 5 * 60_000).toISOString(),
    ...overrides,
  };
}

export function pending(current: Suggestion | null = suggestion(), overrides: Partial<PendingSuggestions> = {}) {
  return {
    execution_id: "ex-1",
    status: current ? "waiting_decision" : "completed",
    paused: false,
    suggestion: current,
    suggestions: current ? [current] : [],
    ...overrides,
  } satisfies PendingSuggestions;
}

export function execution(overrides: Partial<CoachingExecution> = {}): CoachingExecution {
  return {
    execution_id: "ex-1",
    workflow_id: "wf-1",
    workflow_version: 1,
    mode: "coaching",
    status: "waiting_decision",
    progress: { done: 1, total: 3, percent: 33.3 },
    is_coaching: true,
    steps: [
      { step_id: "fetch", name: "Fetch the order", tool: "echo", status: "succeeded", output: { order: 42 }, decision: "accept" },
      { step_id: "greet", name: "Greet the customer", tool: "echo", status: "waiting", output: null, decision: null },
      { step_id: "close", name: "Close the ticket", tool: "noop", status: "pending", output: null, decision: null },
    ],
    ...overrides,
  };
}

export function stats(overrides: Partial<CoachingStats> = {}): CoachingStats {
  return {
    suggestions_made: 2, accepted: 1, rejected: 0, corrected: 0, manual_executions: 0, skipped: 0, timed_out: 0,
    ...overrides,
  };
}

export function metrics(overrides: Partial<WorkflowMetrics> = {}): WorkflowMetrics {
  return {
    workflow_id: "wf-1",
    name: "Customer greeting",
    mode: "coaching",
    level: "COACHING",
    auto_ready: false,
    decisions: 12,
    suggestions: 13,
    accepted: 9,
    rejected: 1,
    corrected: 2,
    manual: 0,
    skipped: 1,
    acceptance_rate: 0.75,
    rolling_acceptance_rate: 0.78,
    confidence: 0.47,
    decision_latency_ms: { p50: 4000, p90: 9000 },
    window_size: 50,
    window_decisions: 12,
    to_auto: {
      decisions_to_coaching: 0,
      window_decisions_needed: 8,
      acceptance_gap: 0.07,
      auto_min_window: 20,
      auto_acceptance: 0.85,
    },
    ...overrides,
  };
}

export function queueItem(overrides: Partial<QueueItem> = {}): QueueItem {
  return {
    ...suggestion(),
    workflow_name: "Customer greeting",
    execution_status: "waiting_decision",
    execution_mode: "coaching",
    ...overrides,
  };
}
