import { api, unwrap } from "../api/typed";

export const agentKeys = {
  transcript: (executionId: string, stepId: string) => ["agent", "transcript", executionId, stepId] as const,
};

export const fetchTranscript = (executionId: string, stepId: string, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/executions/{execution_id}/steps/{step_id}/transcript", {
      params: { path: { execution_id: executionId, step_id: stepId } },
      signal,
    }),
  );
