import type { QueueChanged } from "../realtime/queueChanged";

/** The workspace room's `queue_changed` for these kinds of event and (execution, status) pairs. */
export function changed(events: string[], ...executions: [string, string | null][]): QueueChanged {
  const named = executions.map(([execution_id, status]) => ({ execution_id, status }));
  return { workspace_id: "ws-1", executions: named, truncated: false, events, at: new Date().toISOString() };
}
