import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorNotice } from "../components/QueryState";
import { Dialog } from "../components/Dialog";
import { pauseAt } from "./api";
import { StepSelect } from "./StepSelect";
import { stepLabel, type StepsDialogProps } from "./types";

/**
 * `P`: stop before a step with a question. The step waiting now stops at
 * once; a later one when the execution reaches it. Enter sends. Its `steps`:
 * those it may stop before.
 */
export function PauseDialog({ executionId, steps, onDone, onClose }: StepsDialogProps) {
  const queryClient = useQueryClient();
  const [stepId, setStepId] = useState(steps[0]?.step_id ?? "");
  const [question, setQuestion] = useState("");
  // a pause with no question stops the run on nothing anyone can answer: refused here (and by the server)
  const [blank, setBlank] = useState(false);
  const pause = useMutation({
    mutationFn: () => pauseAt(executionId, stepId, question.trim()),
    onSuccess: (state) => {
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
      void queryClient.invalidateQueries({ queryKey: ["coaching"] });
      void queryClient.invalidateQueries({ queryKey: ["plans"] });
      const now = state.state === "waiting_clarification" && state.step_id === stepId;
      onDone(now ? `Paused before ${stepId}.` : `Will pause before ${stepId} when the execution gets there.`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (pause.isPending || !stepId) return;
    if (!question.trim()) {
      setBlank(true);
      document.getElementById("pause-question")?.focus();
      return;
    }
    pause.mutate();
  };
  return (
    <Dialog title="Pause with a question" onClose={onClose} initialFocus="#pause-question" closeButton={false}>
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor="pause-step">Stop before step</label>
          <StepSelect id="pause-step" steps={steps} value={stepId} onChange={setStepId}
            label={(step) => `${stepLabel(step)}${step.status === "waiting" ? " — waiting now" : ""}`} />
        </div>
        <div className="field">
          <label htmlFor="pause-question">Question</label>
          <input
            id="pause-question"
            type="text"
            autoComplete="off"
            placeholder="What needs clarifying before this step runs?"
            value={question}
            onChange={(e) => {
              setQuestion(e.target.value);
              if (e.target.value.trim()) setBlank(false);
            }}
            aria-invalid={blank || undefined}
            aria-describedby={blank ? "pause-question-error" : undefined}
          />
          {blank ? (
            <p id="pause-question-error" className="field__error" role="alert">
              Write the question first: whoever resumes the run answers it.
            </p>
          ) : null}
          <p className="field__hint">Whoever resumes it answers with feedback; later steps read it as {"{{ feedback.<step_id> }}"}.</p>
        </div>
        {pause.isError ? <ErrorNotice title="The execution was not paused" error={pause.error} /> : null}
        <div className="dialog__actions">
          <button type="submit" className="button" disabled={pause.isPending || !stepId}>
            {pause.isPending ? "Pausing…" : "Pause"} <kbd>Enter</kbd>
          </button>
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel <kbd>Esc</kbd>
          </button>
        </div>
      </form>
    </Dialog>
  );
}
