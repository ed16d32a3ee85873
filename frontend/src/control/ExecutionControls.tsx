import { memo, useState } from "react";
import "./control.css";
import { useShortcuts } from "../coaching/useShortcuts";
import { ANSWER_FIELD_ID, GateAnswer } from "./GateAnswer";
import { PauseDialog } from "./PauseDialog";
import { StepEditDialog } from "./StepEditDialog";
import { editableSteps, pausableSteps, questionGate, type ControlledExecution } from "./types";

/** The control keys, for the shortcut sheet. */
export const CONTROL_SHORTCUTS: readonly { key: string; label: string; help: string }[] = [
  { key: "P", label: "Pause with a question", help: "Shift+P: stop before the current or next step with a question, answered on resume." },
  { key: "e", label: "Edit a pending step", help: "Change a step that has not run: its params (the correction form), timeout and retries." },
  { key: "i", label: "Answer", help: "Go to the answer field of a question or a clarification pause; Enter sends it (or resumes with the feedback)." },
];

/**
 * Interactive control of an execution, on the coaching panel and the execution
 * page: the question it waits on (answered in place), and pause-with-a-question
 * (`P`) and edit-a-pending-step (`e`), as buttons and keys.
 */
export const ExecutionControls = memo(function ExecutionControls({
  execution,
  onMessage,
  showAnswer = true,
}: {
  execution: ControlledExecution;
  /** Said to the user (and screen readers) once something was done. */
  onMessage: (text: string) => void;
  /** Off where the page shows the question itself. */
  showAnswer?: boolean;
}) {
  const [dialog, setDialog] = useState<"pause" | "edit" | null>(null);
  const id = execution.execution_id;
  const gate = questionGate(execution);
  const pausable = pausableSteps(execution);
  const editable = editableSteps(execution);
  const stepOf = (stepId?: string) => execution.steps.find((s) => s.step_id === stepId);

  const open = (name: "pause" | "edit") => {
    if (name === "pause" && pausable.length === 0) {
      onMessage(gate ? "It is already paused: answer the question first." : "There is no step left to pause before.");
      return;
    }
    if (name === "edit" && editable.length === 0) {
      onMessage("There is no pending tool step to edit.");
      return;
    }
    setDialog(name);
  };

  useShortcuts({
    P: () => open("pause"),
    e: () => open("edit"),
    i: () => document.getElementById(ANSWER_FIELD_ID)?.focus(),
  });

  const done = (text: string) => {
    setDialog(null);
    onMessage(text);
  };

  return (
    <>
      {gate && showAnswer ? (
        <GateAnswer
          executionId={id}
          gate={gate}
          stepName={stepOf(gate.step_id)?.name ?? gate.step_id}
          onAnswered={onMessage}
        />
      ) : null}
      <div className="control-bar" role="group" aria-label="Execution control">
        <button
          type="button"
          className="button button--secondary"
          aria-keyshortcuts="Shift+P"
          disabled={pausable.length === 0}
          title={pausable.length === 0 ? "No step left to pause before" : "Stop before a step with a question"}
          onClick={() => open("pause")}
        >
          Pause with a question <kbd>P</kbd>
        </button>
        <button
          type="button"
          className="button button--secondary"
          aria-keyshortcuts="e"
          disabled={editable.length === 0}
          title={editable.length === 0 ? "No pending tool step" : "Change a step that has not run"}
          onClick={() => open("edit")}
        >
          Edit a pending step <kbd>e</kbd>
        </button>
      </div>
      {dialog === "pause" ? (
        <PauseDialog executionId={id} steps={pausable} onDone={done} onClose={() => setDialog(null)} />
      ) : null}
      {dialog === "edit" ? (
        <StepEditDialog executionId={id} steps={editable} onDone={done} onClose={() => setDialog(null)} />
      ) : null}
    </>
  );
});
