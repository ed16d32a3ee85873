import { describe, expect, it } from "vitest";
import { patchedExecution } from "./executionPatch";
import { execution } from "./testFixtures";
import type { ExecutionStatus } from "../api/types";
import type { ExecutionUpdate, PushedStep } from "./types";

const greetDone: PushedStep = { step_id: "greet", status: "succeeded", output: { message: "hi" }, decision: "accept", error: null };

function update(overrides: Partial<ExecutionUpdate> = {}): ExecutionUpdate {
  return {
    execution_id: "ex-1",
    status: "waiting_decision",
    step_id: "close",
    progress: { done: 2, total: 3, percent: 66.7 },
    gate: { kind: "decision", step_id: "close", suggestion_id: "sug-2" },
    steps: [greetDone, { step_id: "close", status: "waiting", output: null, decision: null, error: null }],
    ...overrides,
  };
}

describe("patchedExecution", () => {
  it("applies the pushed states over the cached steps, keeping what the definition says, with status, progress and gate", () => {
    const patched = patchedExecution(execution(), update());
    expect(patched?.status).toBe("waiting_decision");
    expect(patched?.progress).toEqual({ done: 2, total: 3, percent: 66.7 });
    expect(patched?.gate).toEqual({ kind: "decision", step_id: "close", suggestion_id: "sug-2" });
    expect(patched?.steps.map((s) => [s.step_id, s.name, s.status, s.decision])).toEqual([
      ["fetch", "Fetch the order", "succeeded", "accept"],
      ["greet", "Greet the customer", "succeeded", "accept"],
      ["close", "Close the ticket", "waiting", null],
    ]);
    expect(patched?.steps[1].output).toEqual({ message: "hi" });
    // the steps not pushed are the very same objects: the timeline's memo holds for them
    const cached = execution();
    expect(patchedExecution(cached, update())?.steps[0]).toBe(cached.steps[0]);
  });

  it("takes a push that changed no step (a pause) as it is", () => {
    const paused = patchedExecution(execution(), update({ status: "paused", steps: [], progress: { done: 1, total: 3, percent: 33.3 } }));
    expect(paused?.status).toBe("paused");
    expect(paused?.steps).toEqual(execution().steps);
  });

  it("cannot stand for a read: nothing cached, no steps pushed, a missed push, an unknown step, or a status shown from more than the steps", () => {
    expect(patchedExecution(undefined, update())).toBeNull();
    expect(patchedExecution(execution(), update({ steps: undefined }))).toBeNull();
    // greet's state was missed: close's alone does not add up to the 2 steps done the server counted
    expect(patchedExecution(execution(), update({ steps: [{ step_id: "close", status: "waiting", output: null }] }))).toBeNull();
    expect(patchedExecution(execution(), update({ steps: [greetDone, { step_id: "elsewhere", status: "waiting", output: null }] }))).toBeNull();
    for (const status of ["completed", "failed", "cancelled", "waiting_approval", "waiting_clarification"] satisfies ExecutionStatus[]) {
      expect(patchedExecution(execution(), update({ status }))).toBeNull();
    }
  });
});
