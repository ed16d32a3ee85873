import { queryOptions, useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./typed";

/** A workflow as a filter offers it: id, name and its steps' ids and names. */
export interface WorkflowOption {
  workflow_id: string;
  name: string;
  steps: { id: string; name: string }[];
}

export const workflowOptionsKey = ["workflows", "options"] as const;

/** The workspace's workflows (the first 200), for the filters of the queue and the executions list. */
export const workflowOptionsQuery = queryOptions({
  queryKey: workflowOptionsKey,
  staleTime: 60_000,
  queryFn: async ({ signal }): Promise<WorkflowOption[]> => {
    const page = await unwrap(api.GET("/api/workflows", { params: { query: { per_page: 200 } }, signal }));
    return page.items.filter((w) => typeof w?.id === "string").map((w) => ({
      workflow_id: w.id,
      name: w.name,
      steps: (w.steps as { id?: unknown; name?: unknown }[])
        .filter((s) => typeof s?.id === "string")
        .map((s) => ({ id: String(s.id), name: typeof s.name === "string" && s.name ? s.name : String(s.id) })),
    }));
  },
});

export function useWorkflowOptions() {
  return useQuery(workflowOptionsQuery);
}
