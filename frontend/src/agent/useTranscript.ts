import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useExecutionRoom, useRealtime, useSocketEvent } from "../realtime/context";
import { agentKeys, fetchTranscript } from "./api";

/** While the step runs and no live connection says when it changed, its transcript is re-read this often. */
export const TRANSCRIPT_POLL_MS = 2_000;

const FINISHED = new Set(["succeeded", "completed", "failed", "skipped", "rejected", "cancelled"]);

/** An agent step's conversation, re-read when the server pushes `agent_messages` for it. */
export function useTranscript(executionId: string, stepId: string, stepStatus?: string) {
  const queryClient = useQueryClient();
  const { status: connection } = useRealtime();
  const running = !FINISHED.has(stepStatus ?? "");
  useExecutionRoom(executionId);
  useSocketEvent<{ execution_id?: string; step_id?: string }>("agent_messages", (payload) => {
    if (payload?.execution_id !== executionId || payload.step_id !== stepId) return;
    void queryClient.invalidateQueries({ queryKey: agentKeys.transcript(executionId, stepId) });
  });
  return useQuery({
    queryKey: agentKeys.transcript(executionId, stepId),
    queryFn: ({ signal }) => fetchTranscript(executionId, stepId, signal),
    refetchInterval: running && connection !== "online" ? TRANSCRIPT_POLL_MS : false,
  });
}
