import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useRealtime } from "../realtime/context";
import { coachingKeys, sendUndo } from "./api";
import { refreshExecution, rereadIfReading } from "./refresh";
import { isTypingTarget, modalDialogOpen } from "./useShortcuts";
import type { CoachingExecution, PendingSuggestions, UndoResult } from "./types";

/**
 * Takes back the decision held for its undo window on one execution (docs/web-app.md "Undo"). On success the
 * suggestion is shown again at once (the server pushes it to every other panel too) and the execution is read
 * again; on a 409 (the window ended and the step started) the execution is read again, so the panel shows where
 * it really is.
 */
export function useUndo(executionId: string) {
  const queryClient = useQueryClient();
  const { socket, status } = useRealtime();
  return useMutation<UndoResult, unknown, string>({
    mutationFn: (suggestionId) => sendUndo(executionId, suggestionId, socket, status === "online"),
    onSuccess: (answer) => {
      const suggestion = answer.suggestion;
      // a read begun before the undo (while the decision was held) would take the suggestion away again
      rereadIfReading(queryClient, coachingKeys.pending(executionId));
      queryClient.setQueryData<PendingSuggestions>(coachingKeys.pending(executionId), (old) => ({
        execution_id: executionId,
        status: answer.execution.status,
        paused: false,
        suggestion,
        suggestions: [suggestion, ...(old?.suggestions ?? []).filter((s) => s.step_id !== suggestion.step_id)],
      }));
      queryClient.setQueryData<CoachingExecution>(coachingKeys.execution(executionId), (old) =>
        old ? { ...old, status: answer.execution.status, gate: answer.execution.gate ?? null } : old,
      );
      refreshExecution(queryClient, executionId, { pending: false });
    },
    onError: () => refreshExecution(queryClient, executionId),
  });
}

/**
 * Ctrl+Z (⌘Z on a Mac) calls `onUndo` while `enabled`, outside text fields and dialogs (where it undoes typing).
 * The single key `z` goes through useShortcuts with the other keys, under the person's shortcut mode.
 */
export function useUndoChord(onUndo: () => void, enabled: boolean): void {
  const latest = useRef(onUndo);
  latest.current = onUndo;
  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat || event.altKey || event.shiftKey) return;
      if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z") return;
      if (isTypingTarget(event.target) || modalDialogOpen()) return;
      event.preventDefault();
      latest.current();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [enabled]);
}
