/** What the control components read of an execution (GET /api/executions/<id>). */
import type { components } from "../api/schema";
import type { JsonSchema } from "../coaching/types";
import type { StepUpdate } from "./api";

/** An execution's gate: what a person is asked while it waits, with its deadline when it has one. */
export type Gate = components["schemas"]["Gate"];

export interface ControlStep {
  step_id: string;
  name?: string;
  type?: string | null;
  tool?: string | null;
  status: string;
  /** What a correction may change, as written (corrections applied). */
  definition?: StepUpdate;
  params_schema?: JsonSchema | null;
}

/** What a dialog acting on one of an execution's steps (pause before it, edit it) gets. */
export interface StepsDialogProps {
  executionId: string;
  /** The steps it may act on, the default first. */
  steps: ControlStep[];
  onDone: (message: string) => void;
  onClose: () => void;
}

export interface ControlledExecution {
  execution_id: string;
  status: string;
  steps: ControlStep[];
  gate?: Gate | null;
}

/** Gates answered in place: a human_input step's question, and a pause for clarification. */
export const ANSWERED_GATES: ReadonlySet<string> = new Set(["human_input", "clarification"]);

const STOPPED = new Set(["completed", "failed", "cancelled", "waiting_clarification", "waiting_correction"]);

/** The gate a person answers in place, or null. */
export function questionGate(execution: ControlledExecution): Gate | null {
  const gate = execution.gate;
  return gate && gate.kind && ANSWERED_GATES.has(gate.kind) && gate.step_id ? gate : null;
}

/** Whether a step has not run yet (so it can be paused before, or corrected). */
const notRun = (execution: ControlledExecution, step: ControlStep) =>
  step.status === "pending" ||
  (step.status === "waiting" && execution.gate?.kind === "clarification" && execution.gate.step_id === step.step_id);

/** The steps `P` may stop before: the one waiting at a gate, then those that have not run. */
export function pausableSteps(execution: ControlledExecution): ControlStep[] {
  if (STOPPED.has(execution.status)) return [];
  const at = execution.gate?.step_id;
  const waiting = execution.steps.filter((s) => s.step_id === at && s.status === "waiting");
  return [...waiting, ...execution.steps.filter((s) => s.status === "pending" && s.step_id !== at)];
}

/** The steps `e` may change: tool steps that have not run. */
export function editableSteps(execution: ControlledExecution): ControlStep[] {
  if (["completed", "failed", "cancelled"].includes(execution.status)) return [];
  return execution.steps.filter((s) => notRun(execution, s) && (s.tool || s.definition?.tool));
}

export const stepLabel = (step: Pick<ControlStep, "step_id" | "name">) => (step.name && step.name !== step.step_id ? `${step.name} (${step.step_id})` : step.step_id);
