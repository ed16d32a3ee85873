/**
 * `queue_changed` (docs/api.md#real-time-socketio): what the workspace's room hears of its executions' events, in
 * place of each suggestion, update and decision (those go only to the execution's room, to the panels that opened
 * it). One per workspace and interval: the first change at once, the ones within the interval at its end.
 */
export const QUEUE_CHANGED = "queue_changed";

export interface QueueChanged {
  workspace_id: string;
  /** The executions that changed, each with the newest status an `execution_update` gave (null: none did). */
  executions: { execution_id: string; status: string | null }[];
  /** More executions changed than it names: whatever a page keeps of them may be stale. */
  truncated: boolean;
  /** The kinds of their events (`coaching_suggestion`, `execution_update`, `clarification_requested`, …). */
  events: string[];
  at: string;
}

/** Whether a pushed `queue_changed` carries one of these kinds of event (false for anything else pushed). */
export function changedBy(change: QueueChanged | undefined, ...kinds: string[]): boolean {
  return Array.isArray(change?.events) && change.events.some((kind) => kinds.includes(kind));
}
