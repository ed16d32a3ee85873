import type { KeyboardEvent } from "react";
import { Dialog } from "../components/Dialog";
import { GateAnswer, ANSWER_FIELD_ID } from "../control/GateAnswer";
import { formatAge } from "../format";
import { keyVariables } from "./queueFilters";
import { QueueListbox } from "./QueueListbox";
import type { Question } from "./types";

export const questionOptionId = (item: Question) => `queue-question-${item.execution_id}`;

const KIND_LABEL: Record<string, string> = { human_input: "Question", clarification: "Clarification" };

/**
 * The queue's questions: executions waiting for a person's answer (a human_input step, a pause for
 * clarification). One selection moves through them with the queue's other rows; Enter (or `i`) opens the answer.
 */
export function QuestionList({
  items,
  selected,
  now,
  onSelect,
  onOpen,
  onListKeyDown,
}: {
  items: Question[];
  selected: Question | null;
  now: number;
  onSelect: (item: Question) => void;
  onOpen: (item: Question) => void;
  onListKeyDown: (event: KeyboardEvent<HTMLUListElement>) => void;
}) {
  return (
    <section aria-labelledby="questions-heading" className="queue__section">
      <h2 id="questions-heading">Questions</h2>
      <QueueListbox label="Questions waiting for an answer" items={items} selected={selected}
        optionId={questionOptionId} onListKeyDown={onListKeyDown}
        onPick={(item) => {
          onSelect(item);
          onOpen(item);
        }}
        main={(item) => (
          <>
            <span className="queue__workflow">{item.workflow_name}</span>
            <span className="queue__step">
              {item.step_name || item.step_id}: {item.question || "waits for an answer"}
            </span>
            {keyVariables(item.variables) ? <span className="queue__vars mono">{keyVariables(item.variables)}</span> : null}
          </>
        )}
        meta={(item) => (
          <>
            <span className="tag">{KIND_LABEL[item.kind] ?? item.kind}</span>
            <time dateTime={item.paused_at ?? item.waiting_since}>{formatAge(item.paused_at ?? item.waiting_since, now)}</time>
          </>
        )}
      />
    </section>
  );
}

/** The answer to a question, in a dialog over the queue: the field has the focus, Enter sends. */
export function AnswerDialog({
  item,
  onAnswered,
  onClose,
}: {
  item: Question;
  onAnswered: (text: string) => void;
  onClose: () => void;
}) {
  return (
    <Dialog title={`${item.workflow_name}: ${item.step_name || item.step_id}`} onClose={onClose} initialFocus={`#${ANSWER_FIELD_ID}`}>
      {keyVariables(item.variables) ? <p className="muted mono">{keyVariables(item.variables, 6)}</p> : null}
      <GateAnswer
        executionId={item.execution_id}
        gate={{
          kind: item.kind,
          step_id: item.step_id,
          question: item.question,
          deadline: item.deadline,
          on_timeout: item.on_timeout,
        }}
        stepName={item.step_name}
        onAnswered={onAnswered}
      />
    </Dialog>
  );
}
