/** Interactive control of an execution or a plan (a plan id is an execution id): requests and shapes, in one place. */
import { apiGet, apiPost } from "../api/client";

const executionPath = (id: string) => `/api/executions/${encodeURIComponent(id)}`;

/** `GET .../execution-state`, and what pause, apply-correction and resume answer. */
export interface ExecutionControlState {
  execution_id: string;
  state: string;
  step_id: string | null;
  question: string | null;
  paused_at: string | null;
  feedback: unknown;
  /** Steps it will stop before, with the question. */
  breakpoints?: Record<string, string>;
  corrected_steps?: string[];
}

/** What a correction may change in a step that has not run (core/execution/control.py CORRECTABLE). */
export interface StepUpdate {
  name?: string;
  description?: string;
  params?: Record<string, unknown>;
  tool?: string;
  timeout_s?: number;
  retries?: number;
}

export const controlKeys = {
  state: (id: string) => ["executions", "control", id] as const,
};

export const fetchControlState = (id: string, signal?: AbortSignal) =>
  apiGet<ExecutionControlState>(`${executionPath(id)}/execution-state`, { signal });

/** Stop before `stepId` (at once when it is the step waiting) in waiting_clarification, with `question`. */
export const pauseAt = (id: string, stepId: string, question: string) =>
  apiPost<ExecutionControlState>(`${executionPath(id)}/pause`, { step_id: stepId, question: question || null });

/** Change a step that has not run; a 422 names `correction.updated_step.<field>`. */
export const applyCorrection = (id: string, stepId: string, updated: StepUpdate) =>
  apiPost<ExecutionControlState>(`${executionPath(id)}/apply-correction`, {
    step_id: stepId,
    correction: { updated_step: updated },
  });

/** Carry on after a clarification pause; the feedback is kept with the step (`{{ feedback.<step_id> }}`). */
export const resumeWithFeedback = (id: string, feedback: string) =>
  apiPost<ExecutionControlState>(`${executionPath(id)}/resume`, { feedback: feedback === "" ? null : feedback });

/** Answer a human_input step: its output becomes `{answer}`. */
export const answerStep = (id: string, stepId: string, answer: string) =>
  apiPost<unknown>(`${executionPath(id)}/steps/${encodeURIComponent(stepId)}/answer`, { answer });
