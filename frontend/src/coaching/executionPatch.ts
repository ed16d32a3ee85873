/**
 * An `execution_update` applied to the cached execution (coachingKeys.execution), so that the panel's steps follow
 * the pushes without reading the execution again after every decision: that read, landing in the middle of a later
 * decision, held its next suggestion back.
 */
import type { ExecutionUpdate, CoachingExecution } from "./types";

/** A step in one of these is done: it counts in the execution's progress (core.execution.states.STEP_DONE). */
const DONE_STEPS: ReadonlySet<string> = new Set(["succeeded", "failed", "skipped", "rejected", "cancelled"]);

/**
 * The statuses of the decision loop, whose every change the pushes carry whole (the steps and the gate). Another
 * one (finished, an approval, a question) is read again: what the panel shows then is more than the steps.
 */
const CARRIED: ReadonlySet<string> = new Set(["pending", "running", "resumed", "waiting_decision", "waiting_correction", "paused"]);

/**
 * The cached execution with the push applied (its status, progress, gate and changed steps), or null when the push
 * cannot stand for a read: nothing cached yet, a push without the steps' states (an older server), a status whose
 * details are elsewhere, or steps that no longer add up to the progress the server counted (a push was missed).
 */
export function patchedExecution(cached: CoachingExecution | undefined, update: ExecutionUpdate): CoachingExecution | null {
  if (!cached || !Array.isArray(update.steps) || !CARRIED.has(update.status)) return null;
  const pushed = new Map(update.steps.map((step) => [step.step_id, step]));
  let applied = 0;
  const steps = cached.steps.map((step) => {
    const state = pushed.get(step.step_id);
    if (!state) return step;
    applied += 1;
    return { ...step, ...state };
  });
  if (applied !== pushed.size) return null; // a step the cached execution does not have
  const progress = update.progress ?? cached.progress;
  const done = steps.filter((step) => DONE_STEPS.has(step.status)).length;
  if (progress && (done !== progress.done || steps.length !== progress.total)) return null;
  return {
    ...cached,
    status: update.status,
    progress,
    gate: update.gate === undefined ? cached.gate : update.gate,
    steps,
  };
}
