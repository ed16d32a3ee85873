/** Recovery of a failed execution (retry, resume from a step, re-run) and a run's history: requests and shapes. */
import { ApiError } from "../api/client";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";
import { isPlainObject } from "../format";

type Schemas = components["schemas"];

/** What retry and resume-from answer: retry's `run` is the run the step will be (it gets a new idempotency key),
 * resume-from's `skipped` the steps skipped. */
export type Recovered = Schemas["Recovered"];

export type Rerun = Schemas["Rerun"];

export type HistoryChange = Schemas["HistoryChange"];

export type HistoryEvent = Schemas["HistoryEvent"];

export type HistoryStep = Schemas["HistoryStep"];

/** `GET /api/executions/<id>/history`: the run's steps and what happened, in words. */
export type RunHistory = Schemas["RunHistory"];

const execution = (id: string) => ({ path: { execution_id: id } });

export const historyKey = (id: string) => ["executions", "history", id] as const;

export async function fetchHistory(id: string, signal?: AbortSignal): Promise<RunHistory> {
  const body = await unwrap(api.GET("/api/executions/{execution_id}/history", { params: execution(id), signal }));
  // lists always lists, whatever an older server (or a test's stub) answers
  return {
    ...body,
    execution_id: body.execution_id ?? id,
    error: body.error ?? null,
    rerun_of: body.rerun_of ?? null,
    reruns: Array.isArray(body.reruns) ? body.reruns : [],
    events: Array.isArray(body.events) ? body.events : [],
    steps: Array.isArray(body.steps)
      ? body.steps.map((s) => ({ ...s, events: Array.isArray(s.events) ? s.events : [] }))
      : [],
  };
}

/** Run the failed step again (a new attempt, a new idempotency key), with `params` instead of its own when given. */
export const retryStep = (id: string, stepId: string, params?: Record<string, unknown>) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/retry", {
      params: execution(id),
      body: params === undefined ? { step_id: stepId } : { step_id: stepId, params },
    }),
  );

/** Go on from a step that has not run: the failed step (and what the chosen one waits for) is skipped. */
export const resumeFrom = (id: string, stepId: string) =>
  unwrap(api.POST("/api/executions/{execution_id}/resume-from", { params: execution(id), body: { step_id: stepId } }));

/** A new execution of the same workflow, with the same variables or these. */
export const rerun = (id: string, variables?: Record<string, unknown>) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/rerun", {
      params: execution(id),
      body: variables === undefined ? {} : { variables },
    }),
  );

/** A retry's 422 (`params.<field>`) in the shape the correction editor reads (`correction.<field>`). */
export function asCorrectionError(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) return error;
  const details: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error.details)) {
    if (key === "params") details.correction = value;
    else if (key.startsWith("params.")) details[`correction.${key.slice(7)}`] = value;
    else details[key] = value;
  }
  return new ApiError(422, error.code, error.message, details);
}

/** A 422 of re-run: variable name -> messages (`variables.<name>`; "" for the whole). */
export function variableErrors(error: unknown): Record<string, string[]> {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) return {};
  const found: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(error.details)) {
    const name = key === "variables" ? "" : key.replace(/^variables\./, "");
    found[name] = (Array.isArray(value) ? value : [value]).map(String);
  }
  return found;
}
