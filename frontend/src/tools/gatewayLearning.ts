/**
 * Learning per MCP gateway tool (docs/mcp-gateway.md "Learning per tool"): each tool's evidence, mode and spot
 * checks, per agent identity too (GET /api/gateway/tools), and a lead's promotion (POST …/tools/<tool>/mode).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { StepMode } from "../api/metrics";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";
import { useSocketEvent, useWorkspaceRoom } from "../realtime/context";

/** Like a step's: coaching, auto (spot checks) or always_review (pinned). */
export type GatewayMode = StepMode;

type Schemas = components["schemas"];

/** An agent identity's calls of a gateway tool: its own mode, the mode its calls are gated by and whose that is. */
export type GatewayAgentTool = Schemas["GatewayAgentTool"];

/** The reviewers' edits of a tool's arguments and the rules learned from them. */
export type GatewayPack = Schemas["GatewayPack"];

export type GatewayTool = Schemas["GatewayTool"];

/** `GET /api/gateway/tools`; `spot_check_rate` is the server's COACH_SPOT_CHECK_RATE. */
export type GatewayTools = Schemas["GatewayToolList"];

export interface GatewayModeChange {
  tool: string;
  agent?: string;
  mode: GatewayMode;
  force?: boolean;
  reason?: string;
}

/** A gateway tool's mode changed: a lead's promotion, or a demotion by spot checks (event `gateway_tool_changed`). */
export interface GatewayToolChangedEvent {
  tool: string;
  agent: string | null;
  mode?: GatewayMode;
  previous_mode?: GatewayMode;
  level?: string;
  auto_ready?: boolean;
  reason?: string;
  audit_seq?: number;
}

export const gatewayKeys = { tools: ["gateway", "tools"] as const };

/** The tools' evidence, refetched when a decision changes a level or a mode changes (pushed to the workspace room). */
export function useGatewayTools(enabled: boolean) {
  const queryClient = useQueryClient();
  useWorkspaceRoom();
  useSocketEvent<GatewayToolChangedEvent>("gateway_tool_changed", () => {
    void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools });
  });
  useSocketEvent("approval_decided", (approval: { kind?: string } | undefined) => {
    if (approval?.kind === "gateway") void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools });
  });
  return useQuery({
    queryKey: gatewayKeys.tools,
    enabled,
    queryFn: ({ signal }) => unwrap(api.GET("/api/gateway/tools", { signal })),
  });
}

export function useSetGatewayMode() {
  const queryClient = useQueryClient();
  return useMutation<unknown, unknown, GatewayModeChange>({
    mutationFn: ({ tool, ...body }) => unwrap(api.POST("/api/gateway/tools/{tool}/mode", { params: { path: { tool } }, body })),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools }),
  });
}

/** A lead accepts a tool's learned rules (enabled) or stops them. */
export function useSetGatewayPack() {
  const queryClient = useQueryClient();
  return useMutation<GatewayPack, unknown, { tool: string; enabled: boolean }>({
    mutationFn: ({ tool, enabled }) =>
      unwrap(api.PATCH("/api/gateway/tools/{tool}/pack", { params: { path: { tool } }, body: { enabled } })),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools }),
  });
}

/** "Tool shop.add" or "shop.add for agent bot-1". */
export function targetName(change: Pick<GatewayModeChange, "tool" | "agent">): string {
  return change.agent ? `${change.tool} for agent ${change.agent}` : change.tool;
}
