import { apiGet } from "../api/client";
import type { Transcript } from "./types";

export const agentKeys = {
  transcript: (executionId: string, stepId: string) => ["agent", "transcript", executionId, stepId] as const,
};

export const fetchTranscript = (executionId: string, stepId: string, signal?: AbortSignal) =>
  apiGet<Transcript>(
    `/api/executions/${encodeURIComponent(executionId)}/steps/${encodeURIComponent(stepId)}/transcript`,
    { signal },
  );
