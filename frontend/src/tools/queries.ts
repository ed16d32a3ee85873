/** Server state of the Tools page: every tool of the workspace, and its MCP servers (admins). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiDelete, apiGet, apiPost } from "../api/client";
import type { RegistryTool, ToolServer, ToolServerIn } from "./types";

export const toolKeys = {
  all: ["tools"] as const,
  registry: ["tools", "registry"] as const,
  servers: ["tools", "servers"] as const,
};

const serverPath = (id: string) => `/api/tool-servers/${encodeURIComponent(id)}`;

export function useTools() {
  return useQuery({
    queryKey: toolKeys.registry,
    queryFn: ({ signal }) => apiGet<{ items: RegistryTool[] }>("/api/tools", { signal }),
  });
}

export function useToolServers(enabled: boolean) {
  return useQuery({
    queryKey: toolKeys.servers,
    enabled,
    queryFn: ({ signal }) => apiGet<{ items: ToolServer[] }>("/api/tool-servers", { signal }),
  });
}

/** Adds a server, then lists its tools at once (a server is useful only once listed). */
export function useAddServer() {
  const queryClient = useQueryClient();
  return useMutation<ToolServer, unknown, ToolServerIn>({
    mutationFn: async (body) => {
      const made = await apiPost<ToolServer>("/api/tool-servers", body);
      return apiPost<ToolServer>(`${serverPath(made.id)}/refresh`);
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}

/** "Test": lists the server's tools now; its `last_error` says why when it cannot be reached. */
export function useRefreshServer() {
  const queryClient = useQueryClient();
  return useMutation<ToolServer, unknown, string>({
    mutationFn: (id) => apiPost<ToolServer>(`${serverPath(id)}/refresh`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}

export function useRemoveServer() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: (id) => apiDelete<void>(serverPath(id)),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}
