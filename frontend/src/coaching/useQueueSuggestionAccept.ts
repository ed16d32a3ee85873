import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { Dispatch, SetStateAction } from "react";
import { errorMessage } from "../api/client";
import { useRealtime } from "../realtime/context";
import { coachingKeys, sendDecision } from "./api";
import { STALE_MESSAGE } from "./decisions";
import { stepName, type FlashNotice, type QueueItem } from "./types";
import { isStaleDecision } from "./useDecision";

/**
 * `a` on a suggestion selected in the queue: accepts it as its coaching panel would (the same decision, over the
 * socket or REST with an idempotency key), and says what happened. Whether it takes a confirming key first is the
 * caller's (confirmation.ts, the panel's rule).
 */
export function useQueueSuggestionAccept(setNotice: Dispatch<SetStateAction<FlashNotice | null>>) {
  const queryClient = useQueryClient();
  const { socket, status } = useRealtime();
  const accept = useMutation({
    mutationFn: (item: QueueItem) =>
      sendDecision(item.execution_id, { suggestion_id: item.suggestion_id, decision: "accept" }, socket, status === "online"),
    onSuccess: (result, item) => {
      const held = result?.decision?.held_until;
      setNotice({
        tone: "info",
        text:
          `Accepted ${stepName(item)} (${item.workflow_name}).` +
          (held ? " It is held for the undo window before it acts: its coaching panel can take it back." : ""),
      });
    },
    onError: (error) =>
      setNotice({
        tone: "error",
        text: isStaleDecision(error) ? STALE_MESSAGE : `The decision was not applied: ${errorMessage(error)}`,
      }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: coachingKeys.queueAll }),
  });
  return accept;
}
