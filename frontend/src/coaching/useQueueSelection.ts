import { useState, type KeyboardEvent } from "react";
import { approvalOptionId } from "../approvals/ApprovalQueue";
import type { Approval } from "../approvals/types";
import { questionOptionId } from "./QuestionList";
import { suggestionOptionId } from "./SuggestionList";
import type { Question, QueueItem } from "./types";

/** One selectable row of the queue: an approval the viewer can decide, a question, or a suggestion. */
export type Entry =
  | { type: "approval"; item: Approval; key: string }
  | { type: "question"; item: Question; key: string }
  | { type: "suggestion"; item: QueueItem; key: string };

const approvalKey = (item: Approval) => `approval:${item.approval_id}`;
const questionKey = (item: Question) => `question:${item.execution_id}`;
const suggestionKey = (item: QueueItem) => `suggestion:${item.suggestion_id}`;

/** The id of an entry's row in the page, for scrolling it into view. */
const elementId = (entry: Entry) =>
  entry.type === "approval"
    ? approvalOptionId(entry.item)
    : entry.type === "question"
      ? questionOptionId(entry.item)
      : suggestionOptionId(entry.item);

/**
 * The queue's one selection, moving through its rows: approvals first (an execution waits on each), then questions,
 * then suggestions. The selection follows its row when the lists change, and falls back to the first;
 * `linkedApproval` (`?approval=<id>`, from a waiting execution) selects that approval at first.
 */
export function useQueueSelection(
  lists: { approvals: Approval[]; questions: Question[]; suggestions: QueueItem[] },
  linkedApproval: string | null,
) {
  const entries: Entry[] = [
    ...lists.approvals.map((item): Entry => ({ type: "approval", item, key: approvalKey(item) })),
    ...lists.questions.map((item): Entry => ({ type: "question", item, key: questionKey(item) })),
    ...lists.suggestions.map((item): Entry => ({ type: "suggestion", item, key: suggestionKey(item) })),
  ];
  const [selectedKey, setSelectedKey] = useState<string | null>(() =>
    linkedApproval ? `approval:${linkedApproval}` : null,
  );
  const index = Math.max(0, entries.findIndex((entry) => entry.key === selectedKey));
  const current = entries[index] ?? null;

  /** Moves the selection `by` rows (within the rows of one type, when given) and scrolls it into view. */
  const move = (by: number, within?: Entry["type"]) => {
    const pool = within ? entries.filter((e) => e.type === within) : entries;
    if (pool.length === 0) return;
    const at = Math.max(0, pool.findIndex((e) => e.key === current?.key));
    const from = current && pool.some((e) => e.key === current.key) ? at : by > 0 ? -1 : pool.length;
    const target = pool[Math.min(pool.length - 1, Math.max(0, from + by))];
    setSelectedKey(target.key);
    document.getElementById(elementId(target))?.scrollIntoView?.({ block: "nearest" });
  };

  /** A list's arrow, Home and End keys: they move the selection within that list's rows. */
  const listKeys = (within: Entry["type"]) => (event: KeyboardEvent<HTMLUListElement>) => {
    const by = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (by) {
      event.preventDefault();
      move(by, within);
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      move(event.key === "Home" ? -entries.length : entries.length, within);
    }
  };

  return {
    entries,
    current,
    selectedSuggestion: current?.type === "suggestion" ? current.item : null,
    selectedApproval: current?.type === "approval" ? current.item : null,
    selectedQuestion: current?.type === "question" ? current.item : null,
    selectApproval: (item: Approval) => setSelectedKey(approvalKey(item)),
    selectQuestion: (item: Question) => setSelectedKey(questionKey(item)),
    selectSuggestion: (item: QueueItem) => setSelectedKey(suggestionKey(item)),
    move,
    listKeys,
  };
}
