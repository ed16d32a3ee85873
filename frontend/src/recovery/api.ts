/** Recovery of a failed execution (retry, resume from a step, re-run) and a run's history: requests and shapes. */
import { ApiError, apiGet, apiPost } from "../api/client";
import { isPlainObject } from "../format";

const executionPath = (id: string) => `/api/executions/${encodeURIComponent(id)}`;

/** What retry and resume-from answer. */
export interface Recovered {
  execution_id: string;
  status: string;
  step_id: string | null;
  /** retry: the run the step will be; it gets a new idempotency key */
  run: number | null;
  /** resume-from: the steps skipped */
  skipped: string[];
}

export interface Rerun {
  execution_id: string;
  rerun_of: string;
  status: string;
  mode: string;
  workflow_version: number;
  variables: Record<string, unknown>;
}

export interface HistoryChange {
  path: string;
  change: "added" | "removed" | "changed";
  before: unknown;
  after: unknown;
}

export interface HistoryEvent {
  kind: string;
  at: string | null;
  step_id: string | null;
  actor: string | null;
  /** what happened, in words */
  text: string;
  decision?: string;
  comment?: string;
  reason?: string;
  question?: string | null;
  answer?: unknown;
  params?: unknown;
  rationale?: string;
  changes?: HistoryChange[];
  run?: number;
  idempotency_key?: string;
  execution_id?: string;
}

export interface HistoryStep {
  step_id: string;
  name: string;
  type: string;
  tool: string | null;
  status: string;
  error: string | null;
  run: number;
  attempts: number;
  retries: number;
  events: HistoryEvent[];
}

export interface RunHistory {
  execution_id: string;
  status: string;
  error: { step_id?: string | null; message?: string } | null;
  rerun_of: string | null;
  reruns: string[];
  steps: HistoryStep[];
  events: HistoryEvent[];
}

export const historyKey = (id: string) => ["executions", "history", id] as const;

export async function fetchHistory(id: string, signal?: AbortSignal): Promise<RunHistory> {
  const body = await apiGet<Partial<RunHistory>>(`${executionPath(id)}/history`, { signal });
  // lists always lists, whatever an older server (or a test's stub) answers
  return {
    execution_id: body.execution_id ?? id,
    status: body.status ?? "",
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
  apiPost<Recovered>(`${executionPath(id)}/retry`, params === undefined ? { step_id: stepId } : { step_id: stepId, params });

/** Go on from a step that has not run: the failed step (and what the chosen one waits for) is skipped. */
export const resumeFrom = (id: string, stepId: string) =>
  apiPost<Recovered>(`${executionPath(id)}/resume-from`, { step_id: stepId });

/** A new execution of the same workflow, with the same variables or these. */
export const rerun = (id: string, variables?: Record<string, unknown>) =>
  apiPost<Rerun>(`${executionPath(id)}/rerun`, variables === undefined ? {} : { variables });

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
