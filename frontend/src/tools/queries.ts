/** Server state of the Tools page: every tool of the workspace, and its MCP servers (admins). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api/typed";
import type { ToolServer, ToolServerIn } from "./types";

export const toolKeys = {
  all: ["tools"] as const,
  registry: ["tools", "registry"] as const,
  servers: ["tools", "servers"] as const,
};

const server = (id: string) => ({ params: { path: { server_id: id } } });

export function useTools() {
  return useQuery({
    queryKey: toolKeys.registry,
    queryFn: ({ signal }) => unwrap(api.GET("/api/tools", { signal })),
  });
}

export function useToolServers(enabled: boolean) {
  return useQuery({
    queryKey: toolKeys.servers,
    enabled,
    queryFn: ({ signal }) => unwrap(api.GET("/api/tool-servers", { signal })),
  });
}

/** Adds a server, then lists its tools at once (a server is useful only once listed). */
export function useAddServer() {
  const queryClient = useQueryClient();
  return useMutation<ToolServer, unknown, ToolServerIn>({
    mutationFn: async (body) => {
      const made = await unwrap(api.POST("/api/tool-servers", { body }));
      return unwrap(api.POST("/api/tool-servers/{server_id}/refresh", server(made.id)));
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}

/** "Test": lists the server's tools now; its `last_error` says why when it cannot be reached. */
export function useRefreshServer() {
  const queryClient = useQueryClient();
  return useMutation<ToolServer, unknown, string>({
    mutationFn: (id) => unwrap(api.POST("/api/tool-servers/{server_id}/refresh", server(id))),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}

export function useRemoveServer() {
  const queryClient = useQueryClient();
  return useMutation<void, unknown, string>({
    mutationFn: async (id) => {
      await unwrap(api.DELETE("/api/tool-servers/{server_id}", server(id)));
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: toolKeys.all }),
  });
}
