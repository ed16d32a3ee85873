/** Interactive control of an execution or a plan (a plan id is an execution id): requests and shapes, in one place. */
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

type Schemas = components["schemas"];

/** `GET .../execution-state`, and what pause, apply-correction and resume answer (breakpoints: the steps it will stop
 * before, with the question). */
export type ExecutionControlState = Schemas["ExecutionState"];

/** What a correction may change in a step that has not run (core/execution/control.py CORRECTABLE). */
export type StepUpdate = Schemas["StepDefinition"];

const execution = (id: string) => ({ path: { execution_id: id } });

export const controlKeys = {
  state: (id: string) => ["executions", "control", id] as const,
};

export const fetchControlState = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/executions/{execution_id}/execution-state", { params: execution(id), signal }));

/** Stop before `stepId` (at once when it is the step waiting) in waiting_clarification, with `question`. */
export const pauseAt = (id: string, stepId: string, question: string) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/pause", {
      params: execution(id),
      body: { step_id: stepId, question: question || null },
    }),
  );

/** Change a step that has not run; a 422 names `correction.updated_step.<field>`. */
export const applyCorrection = (id: string, stepId: string, updated: StepUpdate) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/apply-correction", {
      params: execution(id),
      body: { step_id: stepId, correction: { updated_step: updated } },
    }),
  );

/** Carry on after a clarification pause; the feedback is kept with the step (`{{ feedback.<step_id> }}`). */
export const resumeWithFeedback = (id: string, feedback: string) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/resume", {
      params: execution(id),
      body: { feedback: feedback === "" ? null : feedback },
    }),
  );

/** Answer a human_input step: its output becomes `{answer}`. */
export const answerStep = (id: string, stepId: string, answer: string) =>
  unwrap(
    api.POST("/api/executions/{execution_id}/steps/{step_id}/answer", {
      params: { path: { execution_id: id, step_id: stepId } },
      body: { answer },
    }),
  );
