import type { QueryClient } from "@tanstack/react-query";
import { planAfterBurst, type Burst } from "../realtime/useCoalesced";
import { coachingKeys, fetchExecution } from "./api";

/**
 * How long a burst of pushes about one execution (a decision's ack, the step's `execution_update`s, the next
 * `coaching_suggestion`) is gathered before the panel reads the server once for all of them.
 */
export const REFRESH_QUIET_MS = 150;
/** However long the burst goes on, read by then. */
export const REFRESH_MAX_WAIT_MS = 1_000;

type Planned = Burst & { pending: boolean };
const planned = new WeakMap<QueryClient, Map<string, Planned>>();

function run(queryClient: QueryClient, executionId: string, pending: boolean): void {
  planned.get(queryClient)?.delete(executionId);
  if (pending) void queryClient.invalidateQueries({ queryKey: coachingKeys.pending(executionId) });
  void queryClient.invalidateQueries({ queryKey: coachingKeys.execution(executionId) });
  void queryClient.invalidateQueries({ queryKey: coachingKeys.queueAll });
}

/**
 * Re-reads what a change to this execution may have changed: its steps, the queue and, with `pending`, the
 * pending suggestion (not needed when the push carried it). Calls close together become one read of each, after
 * the burst is over: re-reading on every push fired a dozen requests per decision, most cancelled by the next.
 * The stats are not among them: the server pushes them (`coaching_stats`) whenever they change.
 */
export function refreshExecution(
  queryClient: QueryClient,
  executionId: string,
  { pending = true }: { pending?: boolean } = {},
): void {
  let byExecution = planned.get(queryClient);
  if (!byExecution) planned.set(queryClient, (byExecution = new Map()));
  let burst = byExecution.get(executionId);
  if (!burst) byExecution.set(executionId, (burst = { pending: false }));
  burst.pending ||= pending;
  const wanted = burst;
  planAfterBurst(burst, () => run(queryClient, executionId, wanted.pending), REFRESH_QUIET_MS, REFRESH_MAX_WAIT_MS);
}

/** Reads the execution and its pending suggestion again now, not after a burst (a read under way stands). */
export function rereadExecution(queryClient: QueryClient, executionId: string): void {
  for (const queryKey of [coachingKeys.execution(executionId), coachingKeys.pending(executionId)]) {
    void queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
  }
}

/**
 * After (re)joining the execution's room, when pushes sent before may have been missed: the join's answer says
 * where the execution is (`{execution: {status, progress}}`); the execution and its pending suggestion are read
 * again when the page's copy (once a read under way has landed) says otherwise (status, progress or gate), or
 * when there is no answer to go by. At a page load they agree, and the first decisions are not slowed by a read that changes nothing.
 */
export function checkAfterJoin(queryClient: QueryClient, executionId: string, ack: unknown): void {
  const seen = (ack as {
    execution?: { status?: string; progress?: { done?: number }; gate?: { kind?: string; suggestion_id?: string } | null };
  } | undefined)?.execution;
  if (!seen?.status) {
    rereadExecution(queryClient, executionId);
    return;
  }
  queryClient
    .fetchQuery({
      queryKey: coachingKeys.execution(executionId),
      queryFn: ({ signal }) => fetchExecution(executionId, signal),
      staleTime: Infinity, // the copy in hand, or the read under way: no new read for this
    })
    .then(
      (copy) => {
        // the gate too: a decision held for its undo window changes neither status nor progress
        const gateMoved = seen.gate !== undefined &&
          ((copy.gate?.kind ?? null) !== (seen.gate?.kind ?? null) ||
           (copy.gate?.suggestion_id ?? null) !== (seen.gate?.suggestion_id ?? null));
        if (copy.status !== seen.status || copy.progress?.done !== seen.progress?.done || gateMoved) {
          rereadExecution(queryClient, executionId);
        }
      },
      () => undefined, // the query shows its own failure
    );
}

/** A read of `queryKey` under way began before a change this page now knows of (a push, a decision's answer) and
 * may answer with what was there before it: that read is dropped and a new one made (after the change). */
export function rereadIfReading(queryClient: QueryClient, queryKey: readonly unknown[]): void {
  if (queryClient.isFetching({ queryKey }) > 0) void queryClient.invalidateQueries({ queryKey }, { cancelRefetch: true });
}
