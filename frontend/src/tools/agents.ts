/** Agent identities of the MCP gateway (/mcp): admins create them (the token is shown once) and revoke them. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

type Schemas = components["schemas"];

export type AgentIdentity = Schemas["AgentOut"];

/** The answer of the create: the only time the token is seen. */
export type CreatedAgent = Schemas["AgentCreated"];

export const agentKeys = { all: ["agents"] as const };

export function useAgents(enabled: boolean) {
  return useQuery({
    queryKey: agentKeys.all,
    enabled,
    queryFn: ({ signal }) => unwrap(api.GET("/api/agents", { signal })),
  });
}

export function useCreateAgent() {
  const queryClient = useQueryClient();
  return useMutation<CreatedAgent, unknown, Schemas["AgentIn"]>({
    mutationFn: (body) => unwrap(api.POST("/api/agents", { body })),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: agentKeys.all }),
  });
}

export function useRevokeAgent() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: async (id) => {
      await unwrap(api.DELETE("/api/agents/{agent_id}", { params: { path: { agent_id: id } } }));
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: agentKeys.all }),
  });
}

/** The endpoint an agent connects to: this page's origin + /mcp. */
export function mcpUrl(path = "/mcp", origin: string = window.location.origin): string {
  return `${origin}${path}`;
}
