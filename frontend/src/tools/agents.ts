/** Agent identities of the MCP gateway (/mcp): admins create them (the token is shown once) and revoke them. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiDelete, apiGet, apiPost } from "../api/client";

export interface AgentIdentity {
  id: string;
  name: string;
  description: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  active: boolean;
}

/** The answer of the create: the only time the token is seen. */
export interface CreatedAgent extends AgentIdentity {
  token: string;
  mcp_path: string;
}

export const agentKeys = { all: ["agents"] as const };

export function useAgents(enabled: boolean) {
  return useQuery({
    queryKey: agentKeys.all,
    enabled,
    queryFn: ({ signal }) => apiGet<{ items: AgentIdentity[] }>("/api/agents", { signal }),
  });
}

export function useCreateAgent() {
  const queryClient = useQueryClient();
  return useMutation<CreatedAgent, unknown, { name: string; description: string }>({
    mutationFn: (body) => apiPost<CreatedAgent>("/api/agents", body),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: agentKeys.all }),
  });
}

export function useRevokeAgent() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => apiDelete<void>(`/api/agents/${encodeURIComponent(id)}`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: agentKeys.all }),
  });
}

/** The endpoint an agent connects to: this page's origin + /mcp. */
export function mcpUrl(path = "/mcp", origin: string = window.location.origin): string {
  return `${origin}${path}`;
}
