/** Paths, query keys and requests of the coaching API, in one place. */
import { ApiError } from "../api/client";
import { api, unwrap } from "../api/typed";
import { emitWithAck, type SocketLike } from "../realtime/socket";
import type { DecisionRequest, DecisionResult, UndoResult } from "./types";
import { workflowMetricsKey } from "../api/metrics";
import type { QueueQuery } from "./queueFilters";

export const QUEUE_PER_PAGE = 50;

const execution = (execution_id: string) => ({ params: { path: { execution_id } } });

export const coachingKeys = {
  all: ["coaching"] as const,
  // `filters`: the queue page's query (queueFilters.ts); unfiltered page 1 is shared with the panel
  queue: (page: number, filters = "") => (filters ? (["coaching", "queue", page, filters] as const) : (["coaching", "queue", page] as const)),
  questions: (filters: string) => ["coaching", "questions", filters] as const,
  queueAll: ["coaching", "queue"] as const,
  // The execution itself shares the key of the execution pages, so both stay in step.
  execution: (id: string) => ["executions", "detail", id] as const,
  pending: (id: string) => ["coaching", "pending", id] as const,
  stats: (id: string) => ["coaching", "stats", id] as const,
  workflowMetrics: workflowMetricsKey,
};

// page and per_page first: the page load's early reads (earlyReads.ts) are of these very paths
export const fetchQueue = (page: number, signal?: AbortSignal, filters: QueueQuery = {}) =>
  unwrap(api.GET("/api/coaching/queue", { params: { query: { page, per_page: QUEUE_PER_PAGE, ...filters } }, signal }));

/** Executions waiting for a person's answer (a human_input step, a pause for clarification), filtered alike. */
export const fetchQuestions = (signal?: AbortSignal, filters: QueueQuery = {}) =>
  unwrap(api.GET("/api/coaching/questions", { params: { query: { per_page: QUEUE_PER_PAGE, ...filters } }, signal }));

export const fetchExecution = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/executions/{execution_id}", { ...execution(id), signal }));

export const fetchPending = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/executions/{execution_id}/coaching/suggestion", { ...execution(id), signal }));

export const fetchStats = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/executions/{execution_id}/coaching/stats", { ...execution(id), signal }));

export const pauseSession = (id: string) => unwrap(api.POST("/api/executions/{execution_id}/coaching/pause", execution(id)));

export const resumeSession = (id: string) => unwrap(api.POST("/api/executions/{execution_id}/coaching/resume", execution(id)));

/** The HTTP status a socket ack's error code stands for, so both channels fail alike. */
const STATUS_OF_CODE: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  policy_denied: 409,
  validation_failed: 422,
};

/** A random key, so that a retried decision is applied once (docs/design.md#decisions `Idempotency-Key`). */
export function newIdempotencyKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/**
 * Sends a decision: over the socket (with its ack) while it is online, over
 * REST otherwise, or when the socket does not answer in time (the same
 * idempotency key makes that retry safe). Fails with an `ApiError` either way.
 */
export async function sendDecision(
  executionId: string,
  body: DecisionRequest,
  socket: SocketLike | null,
  online: boolean,
): Promise<DecisionResult> {
  const key = newIdempotencyKey();
  if (socket && online) {
    const ack = await emitWithAck(socket, "coaching_decision", {
      execution_id: executionId,
      idempotency_key: key,
      ...body,
    });
    // the ack of `coaching_decision` is the REST answer (docs/api.md "Real-time"), which the socket layer does not type
    if (ack.ok) return ack as unknown as DecisionResult;
    const error = ack.error ?? { code: "error", message: "The decision was not applied." };
    if (error.code !== "timeout") {
      throw new ApiError(STATUS_OF_CODE[error.code] ?? 500, error.code, error.message, error.details);
    }
  }
  return unwrap(
    api.POST("/api/executions/{execution_id}/coaching/decision", {
      ...execution(executionId),
      body,
      headers: { "Idempotency-Key": key },
    }),
  );
}

/**
 * Takes back a decision held for its undo window (docs/web-app.md "Undo"): over the socket while it is online, over
 * REST otherwise or when the socket does not answer in time (an undo done twice is a 409, never a second change).
 */
export async function sendUndo(
  executionId: string,
  suggestionId: string,
  socket: SocketLike | null,
  online: boolean,
): Promise<UndoResult> {
  if (socket && online) {
    const ack = await emitWithAck(socket, "coaching_undo", { execution_id: executionId, suggestion_id: suggestionId });
    // the ack of `coaching_undo` is the REST answer (docs/api.md "Real-time"), which the socket layer does not type
    if (ack.ok) return ack as unknown as UndoResult;
    const error = ack.error ?? { code: "error", message: "The decision was not taken back." };
    if (error.code !== "timeout") {
      throw new ApiError(STATUS_OF_CODE[error.code] ?? 409, error.code, error.message, error.details);
    }
  }
  return unwrap(
    api.POST("/api/executions/{execution_id}/coaching/undo", { ...execution(executionId), body: { suggestion_id: suggestionId } }),
  );
}
