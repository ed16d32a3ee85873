import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError } from "../api/client";
import { useRealtime } from "../realtime/context";
import { coachingKeys, pauseSession, resumeSession, sendDecision } from "./api";
import { refreshExecution } from "./useCoachingSession";
import type { CoachingStats, DecisionRequest, DecisionResult, PendingSuggestions } from "./types";

/** True for a 409 that says the suggestion was decided (or replaced) by someone else. */
export function isStaleDecision(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 409) return false;
  const details = error.details as { suggestion_status?: string; suggestion_id?: string } | undefined;
  return Boolean(details && (details.suggestion_status || details.suggestion_id));
}

/**
 * Sends the operator's decisions on one execution (socket when online, REST
 * otherwise; see `sendDecision`). On success the ack's stats are shown at
 * once; after any answer, success or a conflict, the suggestion and steps are
 * read again, so the panel always ends on the server's current state.
 */
export function useDecision(executionId: string) {
  const queryClient = useQueryClient();
  const { socket, status } = useRealtime();

  return useMutation<DecisionResult, unknown, DecisionRequest>({
    mutationFn: (body) => sendDecision(executionId, body, socket, status === "online"),
    onSuccess: (result) => {
      if (result.stats) queryClient.setQueryData<CoachingStats>(coachingKeys.stats(executionId), result.stats);
      refreshExecution(queryClient, executionId);
    },
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409) refreshExecution(queryClient, executionId);
    },
  });
}

/** Pauses or resumes the coaching session (`p`). */
export function usePauseToggle(executionId: string) {
  const queryClient = useQueryClient();
  return useMutation<PendingSuggestions, unknown, "pause" | "resume">({
    mutationFn: (action) => (action === "pause" ? pauseSession(executionId) : resumeSession(executionId)),
    onSuccess: (answer) => {
      queryClient.setQueryData(coachingKeys.pending(executionId), answer);
      refreshExecution(queryClient, executionId);
    },
    onError: () => refreshExecution(queryClient, executionId),
  });
}
