import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { api, unwrap } from "../api/typed";
import type { QueuePage } from "../coaching/types";
import { useRealtime, useSocketEvent } from "../realtime/context";
import { changedBy, QUEUE_CHANGED, type QueueChanged } from "../realtime/queueChanged";

export const queueSizeKey = (workspace: string) => ["notifications", "queue-size", workspace] as const;
/** Events that come in bursts are read once, this long after the last one. */
export const QUEUE_RECHECK_MS = 200;
/** While the live connection is down the queue is read this often instead. */
export const QUEUE_OFFLINE_POLL_MS = 10_000;
/**
 * Statuses of an execution that stays in the queue or comes back to it on its own (a decided step runs, then the
 * next one is suggested); any other (finished, failed, waiting for something else) may have emptied the queue.
 */
const STAYING = new Set(["waiting_decision", "paused", "pending", "running", "resumed"]);
/** Events (named in the workspace room's `queue_changed`) after which a new item may have entered the queue. */
const ARRIVALS = ["coaching_suggestion", "tool_call_pending_review", "clarification_requested"] as const;

/**
 * Calls `onArrival` (with the queue's newest item and its size) when the workspace's queue goes from empty to not
 * empty, while `enabled`. The queue's size is read once at the start, then only when it may have changed in that
 * way: a new item while it is empty, or an execution that left it while it is not. An operator deciding one
 * suggestion after another causes no read at all. (A run whose step is still running counts as queued: its
 * next suggestion is no news.)
 */
export function useQueueArrivals(enabled: boolean, workspace: string, onArrival: (page: QueuePage) => void): void {
  const queryClient = useQueryClient();
  const { status: connection } = useRealtime();
  const known = useRef<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const left = useRef(new Map<string, string>());
  const arrival = useRef(onArrival);
  arrival.current = onArrival;

  const size = useQuery({
    queryKey: queueSizeKey(workspace),
    queryFn: ({ signal }) => unwrap(api.GET("/api/coaching/queue", { params: { query: { page: 1, per_page: 1 } }, signal })),
    enabled,
    staleTime: Infinity,
    refetchInterval: connection === "online" ? false : QUEUE_OFFLINE_POLL_MS,
  });

  useEffect(() => {
    // another workspace's queue is not this one's: start again from what it is
    known.current = null;
    if (enabled) return;
    // turned off: forget what was known, so turning on again starts from the queue as it is then
    queryClient.removeQueries({ queryKey: queueSizeKey(workspace) });
  }, [enabled, workspace, queryClient]);

  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const total = size.data?.total;
  useEffect(() => {
    if (total === undefined || !size.data) return;
    if (known.current === 0 && total > 0) arrival.current(size.data);
    known.current = total;
  }, [total, size.data]);

  const recheck = () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      const gone = [...left.current.values()].some((status) => !STAYING.has(status));
      left.current.clear();
      if (known.current === 0 || gone) void queryClient.invalidateQueries({ queryKey: queueSizeKey(workspace) });
    }, QUEUE_RECHECK_MS);
  };

  const onNewItem = () => {
    if (enabled && known.current === 0) recheck();
  };
  // a gateway call held for a review is the workspace's own event, pushed to its room as it is
  useSocketEvent(ARRIVALS[1], onNewItem);
  useSocketEvent<QueueChanged>(QUEUE_CHANGED, (change) => {
    if (changedBy(change, ...ARRIVALS)) onNewItem();
    if (!enabled || !known.current || !changedBy(change, "execution_update")) return;
    // the last status of each execution in a burst counts: deciding moves a run on to its next suggestion
    for (const { execution_id: id, status } of change.executions) if (status) left.current.set(id, status);
    if (change.truncated) left.current.set("", "unknown"); // more changed than it names: one may have left
    recheck();
  });
}
