import { useQuery, useQueryClient } from "@tanstack/react-query";
import { fetchWorkflowMetrics } from "../api/metrics";
import { isTerminalStatus, type Execution } from "../api/types";
import { useExecutionRoom, useRealtime, useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import {
  coachingKeys,
  fetchExecution,
  fetchPending,
  fetchStats,
} from "./api";
import { patchedExecution } from "./executionPatch";
import { checkAfterJoin, refreshExecution, rereadIfReading } from "./refresh";
import type { CoachingExecution, CoachingStats, ExecutionUpdate, PendingSuggestions, Suggestion } from "./types";

export { refreshExecution } from "./refresh";

/** While the live connection is down, the panel reads the server this often instead. */
export const OFFLINE_POLL_MS = 3_000;

/**
 * Everything the CoachingPanel shows of one execution, kept live: the
 * execution and its steps, the pending suggestion, the session's stats and
 * the workflow's metrics. Pushed events update it at once: a suggestion
 * replaces the shown one, an `execution_update` patches the steps it carries
 * (read again only when it cannot stand for a read: see patchedExecution);
 * each (re)join of the room reads it again; while offline it polls.
 */
export function useCoachingSession(executionId: string) {
  const queryClient = useQueryClient();
  const { status: connection } = useRealtime();
  // Pushes sent before this page was in the room (or while it was offline) are not patched in: after each (re)join
  // the execution and its pending suggestion are read again unless the join's answer agrees with the copy in hand.
  useExecutionRoom(executionId, (ack) => checkAfterJoin(queryClient, executionId, ack));
  // The workspace room carries `metrics_update` for the workflow's stats.
  useWorkspaceRoom();
  const offlinePoll = connection === "online" ? false : OFFLINE_POLL_MS;

  const execution = useQuery({
    queryKey: coachingKeys.execution(executionId),
    queryFn: ({ signal }) => fetchExecution(executionId, signal),
    refetchInterval: (query) => (isTerminalStatus(query.state.data?.status) ? false : offlinePoll),
  });
  const pending = useQuery({
    queryKey: coachingKeys.pending(executionId),
    queryFn: ({ signal }) => fetchPending(executionId, signal),
    refetchInterval: (query) => (isTerminalStatus(query.state.data?.status) ? false : offlinePoll),
  });
  const stats = useQuery({
    queryKey: coachingKeys.stats(executionId),
    queryFn: ({ signal }) => fetchStats(executionId, signal),
    refetchInterval: () => (isTerminalStatus(execution.data?.status) ? false : offlinePoll),
  });
  const workflowId = execution.data?.workflow_id;
  const metrics = useQuery({
    queryKey: coachingKeys.workflowMetrics(workflowId ?? ""),
    queryFn: ({ signal }) => fetchWorkflowMetrics(workflowId ?? "", signal),
    enabled: Boolean(workflowId),
  });

  useSocketEvent<Suggestion>("coaching_suggestion", (suggestion) => {
    if (suggestion?.execution_id !== executionId || suggestion.status !== "pending") return;
    // a read under way may answer after this push with what was pending before it (the decision that led to it
    // not yet committed): it would take the push back, so it is dropped and the suggestion read again
    rereadIfReading(queryClient, coachingKeys.pending(executionId));
    queryClient.setQueryData<PendingSuggestions>(coachingKeys.pending(executionId), (old) => ({
      execution_id: executionId,
      // a rejoin re-sends the pending suggestion of a paused session: the paused flag stays as it was
      status: old?.status ?? (suggestion.purpose === "correction" ? "waiting_correction" : "waiting_decision"),
      paused: old?.paused ?? false,
      suggestion,
      suggestions: [suggestion, ...(old?.suggestions ?? []).filter((s) => s.step_id !== suggestion.step_id)],
    }));
    // the push is the pending suggestion; the steps come with the execution_update that goes with it
  });

  useSocketEvent<ExecutionUpdate>("execution_update", (update) => {
    if (update?.execution_id !== executionId) return;
    queryClient.setQueryData<PendingSuggestions>(coachingKeys.pending(executionId), (old) =>
      old ? { ...old, status: update.status, paused: update.status === "paused" } : old,
    );
    const key = coachingKeys.execution(executionId);
    // a read under way may have been answered before this push: it would undo the push, so it is read again
    const patched = queryClient.isFetching({ queryKey: key })
      ? null
      : patchedExecution(queryClient.getQueryData<CoachingExecution>(key), update);
    if (patched) {
      queryClient.setQueryData<CoachingExecution>(key, patched);
      return;
    }
    // the header's status and progress as the push says, now; the rest comes with the re-read below
    queryClient.setQueryData<Execution>(key, (old) =>
      old ? { ...old, status: update.status, progress: update.progress ?? old.progress } : old,
    );
    // a finished execution has nothing pending any more; otherwise a new suggestion comes as its own push
    refreshExecution(queryClient, executionId, { pending: isTerminalStatus(update.status) });
  });

  useSocketEvent<CoachingStats & { execution_id?: string }>("coaching_stats", (payload) => {
    if (payload?.execution_id !== executionId) return;
    const { execution_id: _ignored, ...counts } = payload;
    queryClient.setQueryData<CoachingStats>(coachingKeys.stats(executionId), counts);
  });

  // The push is the workflow's new snapshot (counters, rates, level, evidence): shown as it is, no re-read.
  useSocketEvent<Record<string, unknown> & { workflow_id?: string }>("metrics_update", (payload) => {
    if (!workflowId || payload?.workflow_id !== workflowId) return;
    const key = coachingKeys.workflowMetrics(workflowId);
    if (queryClient.getQueryData(key)) queryClient.setQueryData(key, (old: object) => ({ ...old, ...payload }));
    else void queryClient.invalidateQueries({ queryKey: key });
  });

  return { execution, pending, stats, metrics, connection };
}
