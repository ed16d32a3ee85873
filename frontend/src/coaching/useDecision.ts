import { useMutation, useQueryClient, type MutateOptions } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { useRealtime } from "../realtime/context";
import { coachingKeys, pauseSession, resumeSession, sendDecision } from "./api";
import { refreshExecution, rereadIfReading } from "./refresh";
import type { CoachingStats, DecisionRequest, DecisionResult, PendingSuggestions } from "./types";

/** True for a 409 that says the suggestion was decided (or replaced) by someone else. */
export function isStaleDecision(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 409) return false;
  const details = error.details as { suggestion_status?: string; suggestion_id?: string } | undefined;
  return Boolean(details && (details.suggestion_status || details.suggestion_id));
}

/**
 * How long a decision may be on its way before the panel shows it (the buttons off, "Sending the decision…"). A
 * quicker answer, the usual one, shows nothing between the key and the next suggestion: drawing that state took the
 * page's time (and, on a small machine, the server's) in the very milliseconds the operator waits for.
 */
export const SENDING_SHOWN_AFTER_MS = 150;

/**
 * A decision on its way: what was asked, the server's answer to come, and whether it went over the live connection
 * (then the pushes that go with it reach this page; over REST they may not: the page may not be in the execution's
 * room yet, so it reads what changed).
 */
type Sending = { request: DecisionRequest; answer: Promise<DecisionResult>; live: boolean };

/**
 * Sends the operator's decisions on one execution (socket when online, REST
 * otherwise; see `sendDecision`). On success the ack's stats are shown at
 * once, and the steps follow from the pushes (offline: from a read); after a
 * conflict the suggestion and steps are read again, so the panel always ends
 * on the server's current state.
 *
 * `send` puts the decision on the wire at once, in the key press's own task; the "sending" state is shown only
 * when the answer is slow (`showSending`, SENDING_SHOWN_AFTER_MS). One decision at a time:
 * a second `send` before the first is answered is dropped (the pending state may not be rendered yet).
 */
export function useDecision(executionId: string) {
  const queryClient = useQueryClient();
  const { socket, status } = useRealtime();
  const inFlight = useRef(false);
  const [slow, setSlow] = useState(false);
  const slowTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const mutation = useMutation<DecisionResult, unknown, Sending>({
    mutationFn: ({ answer }) => answer,
    onSuccess: (result, { request: body, live }) => {
      if (result.stats) queryClient.setQueryData<CoachingStats>(coachingKeys.stats(executionId), result.stats);
      // The decided suggestion is no longer pending; the next one is pushed (`coaching_suggestion`). Offline,
      // the panel polls, so the pending suggestion is read again then. A read begun before the decision would
      // bring it back: read again.
      rereadIfReading(queryClient, coachingKeys.pending(executionId));
      queryClient.setQueryData<PendingSuggestions>(coachingKeys.pending(executionId), (old) => {
        if (!old) return old;
        const left = (old.suggestions ?? []).filter((s) => s.suggestion_id !== body.suggestion_id);
        const shown = old.suggestion?.suggestion_id === body.suggestion_id ? (left[0] ?? null) : old.suggestion;
        return { ...old, suggestion: shown, suggestions: left };
      });
      // Sent over the live connection, the pushes that go with the decision carry the steps it changed
      // (useCoachingSession). Sent over REST (offline, or the connection was still coming up and its room not yet
      // joined: the pushes of a decision committed before the join are not seen again), read them: the held gate
      // of a decision in its undo window, the next suggestion.
      if (!live) refreshExecution(queryClient, executionId);
    },
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409) refreshExecution(queryClient, executionId);
    },
    onSettled: () => {
      inFlight.current = false;
      clearTimeout(slowTimer.current);
      setSlow(false);
    },
  });

  const { mutate, isPending, error, reset, variables } = mutation;
  useEffect(() => () => clearTimeout(slowTimer.current), []);
  const send = useCallback(
    (request: DecisionRequest, options?: MutateOptions<DecisionResult, unknown, Sending>) => {
      if (inFlight.current) return;
      inFlight.current = true;
      clearTimeout(slowTimer.current);
      slowTimer.current = setTimeout(() => setSlow(true), SENDING_SHOWN_AFTER_MS);
      const live = Boolean(socket) && status === "online";
      const answer = sendDecision(executionId, request, socket, live);
      answer.catch(() => undefined); // the mutation reports a failure (onError)
      mutate({ request, answer, live }, options);
    },
    [executionId, socket, status, mutate],
  );
  // `showSending`: on its way for longer than SENDING_SHOWN_AFTER_MS; `sendingFor`: the suggestion it decides
  const sendingFor = isPending ? (variables?.request.suggestion_id ?? null) : null;
  return { send, isPending, sendingFor, showSending: isPending && slow, error, reset };
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
