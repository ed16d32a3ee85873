/**
 * Learning per MCP gateway tool (docs/mcp-gateway.md "Learning per tool"): each tool's evidence, mode and spot
 * checks, per agent identity too (GET /api/gateway/tools), and a lead's promotion (POST …/tools/<tool>/mode).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiGet, apiPatch, apiPost } from "../api/client";
import type { MetricsSnapshot, StepMode } from "../api/metrics";
import { useSocketEvent, useWorkspaceRoom } from "../realtime/context";

/** Like a step's: coaching, auto (spot checks) or always_review (pinned). */
export type GatewayMode = StepMode;

export interface GatewayAgentTool extends MetricsSnapshot {
  /** the identity's own mode for the tool (coaching: it follows the tool) */
  mode: GatewayMode;
  /** the mode its calls are gated by */
  effective_mode: GatewayMode;
  /** whose mode that is */
  mode_of: "tool" | "agent" | null;
  spot_check_rate: number | null;
  spot_checks: MetricsSnapshot | null;
  /** of its decisions, the answers of the person at the agent to a confirm rule (null: none) */
  at_agent?: MetricsSnapshot | null;
}

/** The reviewers' edits of a tool's arguments and the rules learned from them. */
export interface GatewayPack {
  pack_id: string;
  tool: string;
  /** a lead accepted its learned rules: suggested to reviewers, applied in AUTO */
  enabled: boolean;
  corrections: number;
  changes: { field: string; before: unknown; after: unknown; count: number }[];
  rules: { field: string; before: unknown; after: unknown; count: number; share: number }[];
}

export interface GatewayTool extends MetricsSnapshot {
  tool: string;
  source: "gateway";
  listed: boolean;
  mode: GatewayMode;
  spot_check_rate: number | null;
  spot_checks: MetricsSnapshot | null;
  pack?: GatewayPack | null;
  agents: Record<string, GatewayAgentTool>;
}

export interface GatewayTools {
  items: GatewayTool[];
  identities: Record<string, MetricsSnapshot>;
  /** the server's COACH_SPOT_CHECK_RATE */
  spot_check_rate: number;
}

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
    queryFn: ({ signal }) => apiGet<GatewayTools>("/api/gateway/tools", { signal }),
  });
}

export function useSetGatewayMode() {
  const queryClient = useQueryClient();
  return useMutation<unknown, unknown, GatewayModeChange>({
    mutationFn: ({ tool, ...body }) => apiPost(`/api/gateway/tools/${encodeURIComponent(tool)}/mode`, body),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools }),
  });
}

/** A lead accepts a tool's learned rules (enabled) or stops them. */
export function useSetGatewayPack() {
  const queryClient = useQueryClient();
  return useMutation<GatewayPack, unknown, { tool: string; enabled: boolean }>({
    mutationFn: ({ tool, enabled }) =>
      apiPatch<GatewayPack>(`/api/gateway/tools/${encodeURIComponent(tool)}/pack`, { enabled }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: gatewayKeys.tools }),
  });
}

/** "Tool shop.add" or "shop.add for agent bot-1". */
export function targetName(change: Pick<GatewayModeChange, "tool" | "agent">): string {
  return change.agent ? `${change.tool} for agent ${change.agent}` : change.tool;
}
