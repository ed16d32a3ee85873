/** The operator's keys and what each decision may be used for, in one place. */
import type { DecisionKind, Suggestion } from "./types";

export interface DecisionAction {
  kind: DecisionKind;
  key: string;
  label: string;
  /** What the shortcut sheet says it does. */
  help: string;
}

export const DECISION_ACTIONS: readonly DecisionAction[] = [
  { kind: "accept", key: "a", label: "Accept", help: "Run the step with the suggested params." },
  { kind: "reject", key: "r", label: "Reject", help: "Do not run it; asks why (the feedback), then waits for a correction." },
  { kind: "correct", key: "c", label: "Correct", help: "Open the correction editor and run the step with your params." },
  { kind: "manual", key: "m", label: "Manual", help: "You did it by hand: asks for its output (JSON or text)." },
  { kind: "skip", key: "s", label: "Skip", help: "Do not run it; steps that read its output are skipped too." },
];

export const OTHER_SHORTCUTS: readonly { key: string; label: string; help: string }[] = [
  { key: "p", label: "Pause / resume", help: "Pause the coaching session, or resume it." },
  { key: "?", label: "Shortcuts", help: "Show this list of shortcuts." },
  { key: "n", label: "Next", help: "When the execution has finished: open the next item of the queue (Enter too)." },
  { key: "Enter", label: "Confirm", help: "After a or s on a risky call (external, destructive, or flagged by the policy): send it. Esc cancels." },
  { key: "z", label: "Undo", help: "While a decision on a risky call is held (its countdown shows): take it back; the suggestion is back. Ctrl+Z too." },
  { key: "Esc", label: "Close", help: "Close a dialog or the correction editor; cancel a decision waiting for Enter." },
];

/** The queue's keys for the selected approval (see ApprovalQueue). */
export const APPROVAL_ACTIONS = [
  { key: "a", label: "Approve", help: "Queue: approve the selected approval (counts towards its quorum); Enter confirms it." },
  { key: "r", label: "Reject", help: "Queue: reject the selected approval; asks for a comment. One reject rejects." },
  { key: "e", label: "Edit params", help: "Queue: edit a tool call's params before it runs; counts as your approval." },
] as const;

/** What the panel says when a decision lost the race with someone else's (a 409 on a decided suggestion). */
export const STALE_MESSAGE = "This suggestion was already decided by someone else — showing the current suggestion.";

/** After a rejection the step takes a correction, a manual result or a skip (docs/design.md#decisions). */
const AFTER_REJECT: ReadonlySet<DecisionKind> = new Set(["correct", "manual", "skip"]);

/** Why `kind` cannot be sent now, or null when it can. */
/** Said when a decision key is pressed with no suggestion shown; taken back as soon as one is. */
export const NO_SUGGESTION = "There is no suggestion to decide.";

export function unavailableReason(kind: DecisionKind, suggestion: Suggestion | null, paused: boolean): string | null {
  if (!suggestion) return NO_SUGGESTION;
  if (paused) return "The session is paused. Press p to resume it.";
  if (suggestion.purpose === "correction" && !AFTER_REJECT.has(kind)) {
    return "This step was rejected: correct it (c), do it by hand (m) or skip it (s).";
  }
  return null;
}
