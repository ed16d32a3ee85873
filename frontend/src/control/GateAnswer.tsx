import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { answerStep, resumeWithFeedback } from "./api";
import { Countdown } from "./Countdown";
import type { Gate } from "./types";

/** The id of the answer field, which `i` focuses. */
export const ANSWER_FIELD_ID = "gate-answer";

/**
 * A question the execution waits on, answered in place: a human_input step's
 * (the answer becomes its output) or a pause for clarification (resumed with
 * the feedback, which later steps read as `{{ feedback.<step_id> }}`). Enter
 * sends; the deadline, when it has one, ticks beside the question.
 */
export function GateAnswer({
  executionId,
  gate,
  stepName,
  onAnswered,
}: {
  executionId: string;
  /** an execution's gate, or a queue's question item (whose on_timeout is null when it has none) */
  gate: Omit<Gate, "on_timeout"> & { on_timeout?: Gate["on_timeout"] | null };
  stepName?: string;
  onAnswered?: (text: string) => void;
}) {
  const queryClient = useQueryClient();
  const [text, setText] = useState("");
  const [missing, setMissing] = useState(false);
  const headingId = useId();
  const errorId = useId();
  // an agent's CONFIRM_DATA is answered like a human_input step: the answer is its next message
  const isAgent = gate.kind === "clarification" && Boolean(gate.agent);
  const isInput = gate.kind === "human_input" || isAgent;
  const stepId = gate.step_id ?? "";
  const send = useMutation({
    mutationFn: async (value: string) => {
      if (isInput) await answerStep(executionId, stepId, value);
      else await resumeWithFeedback(executionId, value);
    },
    onSuccess: (_result, value) => {
      setText("");
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
      void queryClient.invalidateQueries({ queryKey: ["coaching"] });
      void queryClient.invalidateQueries({ queryKey: ["plans"] });
      onAnswered?.(isInput ? `Answered ${stepName ?? stepId}.` : `Resumed ${stepName ?? stepId}${value ? " with your feedback" : ""}.`);
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (send.isPending) return;
    if (isInput && text.trim() === "") {
      setMissing(true);
      return;
    }
    setMissing(false);
    send.mutate(text.trim());
  };

  const problem = missing ? "Type an answer first." : send.isError ? `Not sent: ${errorMessage(send.error)}` : null;
  return (
    <section className="card gate-answer" aria-labelledby={headingId} data-testid="gate-answer">
      <h2 id={headingId} className="gate-answer__title">
        {isAgent ? "The agent asks" : isInput ? "Question" : "Paused for clarification"}: {stepName ?? stepId}
      </h2>
      <p className="gate-answer__question">{gate.question || (isInput ? "This step asks for an answer." : "Paused before this step.")}</p>
      <Countdown deadline={gate.deadline} onTimeout={gate.on_timeout} what="This question" />
      {gate.kind === "clarification" && gate.corrected ? (
        <p className="muted">You corrected this step while it was paused: it runs as corrected once resumed.</p>
      ) : null}
      <form className="gate-answer__form" onSubmit={submit}>
        <div className="field">
          <label htmlFor={ANSWER_FIELD_ID}>
            {isInput ? "Your answer" : "Feedback (optional)"} <kbd>i</kbd>
          </label>
          <input
            id={ANSWER_FIELD_ID}
            type="text"
            autoComplete="off"
            value={text}
            aria-invalid={missing ? true : undefined}
            aria-describedby={problem ? errorId : undefined}
            aria-keyshortcuts="i"
            onChange={(e) => setText(e.target.value)}
          />
          {problem ? (
            <p id={errorId} className="field__error" role="alert">
              ✕ {problem}
            </p>
          ) : null}
        </div>
        <button type="submit" className="button" disabled={send.isPending}>
          {send.isPending ? "Sending…" : isInput ? "Send answer" : "Resume with feedback"} <kbd>Enter</kbd>
        </button>
      </form>
    </section>
  );
}
