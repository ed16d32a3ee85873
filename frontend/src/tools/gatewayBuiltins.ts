/**
 * The built-in tools this workspace's agents may call through the MCP gateway, as `coach.<tool>`
 * (docs/mcp-gateway.md "Built-in tools for agents"): leads read the choice, admins make it
 * (GET/PUT /api/workspace/gateway).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";
import { gatewayKeys } from "./gatewayLearning";

export type GatewaySettings = components["schemas"]["GatewaySettings"];
export type BuiltinTool = components["schemas"]["BuiltinTool"];

export const gatewaySettingsKey = ["tools", "gateway-builtins"] as const;

/** Both lists, empty when the answer leaves one out. */
function settled(body: Partial<GatewaySettings>): GatewaySettings {
  return { builtin_tools: body.builtin_tools ?? [], available: body.available ?? [] };
}

export function useGatewaySettings(enabled: boolean) {
  return useQuery({
    queryKey: gatewaySettingsKey,
    enabled,
    queryFn: async ({ signal }) => settled(await unwrap(api.GET("/api/workspace/gateway", { signal }))),
  });
}

export function useSaveGatewaySettings() {
  const queryClient = useQueryClient();
  return useMutation<GatewaySettings, unknown, string[]>({
    mutationFn: async (names) =>
      settled(await unwrap(api.PUT("/api/workspace/gateway", { body: { builtin_tools: names } }))),
    onSuccess: (saved) => queryClient.setQueryData(gatewaySettingsKey, saved),
    // the learning per tool lists the exposed ones as gateway tools
    onSettled: () => void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools }),
  });
}
