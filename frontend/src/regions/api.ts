/**
 * Regions of a tool scope (docs/autonomy.md#regions): a workflow's tool step, an agent step's calls of one tool
 * (the step scope `<agent step>:<tool>`) or a gateway tool. Their list with the
 * evidence and the proposals (GET …/regions), a region's changes (POST …/regions, PATCH / DELETE /api/regions/<id>,
 * POST /api/regions/<id>/mode) and the replay of a condition before it is saved (POST …/replay). Leads only.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";
import { useSocketEvent, useWorkspaceRoom } from "../realtime/context";

export { regionModeLabel, suggestionRegionText } from "./labels";

type Schemas = components["schemas"];
export type Region = Schemas["Region"];
export type RegionList = Schemas["RegionList"];
export type Proposal = Schemas["Proposal"];
export type Replay = Schemas["Replay"];
export type ReplayLink = Schemas["ReplayLink"];
export type Tally = Schemas["Tally"];
export type RegionMode = Region["mode"];
export type SuggestionRegion = Schemas["SuggestionRegion"];

/** Whose regions: a workflow's tool step (or `<agent step>:<tool>`), or a gateway tool. */
export type RegionScope = { kind: "step"; workflowId: string; stepId: string } | { kind: "gateway"; tool: string };

const path = encodeURIComponent;

/** The scope's routes' common part: `/api/workflows/<id>/steps/<step>` or `/api/gateway/tools/<tool>`. */
export function scopePath(scope: RegionScope): string {
  return scope.kind === "step"
    ? `/api/workflows/${path(scope.workflowId)}/steps/${path(scope.stepId)}`
    : `/api/gateway/tools/${path(scope.tool)}`;
}

/** An agent step's calls of one tool are a step scope `<agent step>:<tool>`: (agent step, tool), else null. */
export function agentTool(scope: RegionScope): { step: string; tool: string } | null {
  if (scope.kind !== "step") return null;
  const at = scope.stepId.indexOf(":");
  return at < 0 ? null : { step: scope.stepId.slice(0, at), tool: scope.stepId.slice(at + 1) };
}

/** "step refund", "tool file.read of agent step analyse" or "gateway tool shop.add": what the section's names say. */
export function scopeName(scope: RegionScope): string {
  const agent = agentTool(scope);
  if (agent) return `tool ${agent.tool} of agent step ${agent.step}`;
  return scope.kind === "step" ? `step ${scope.stepId}` : `gateway tool ${scope.tool}`;
}

/** Whose mode a call in no region follows: "step's", "agent step's" or "tool's". */
export function outsideOwner(scope: RegionScope): string {
  return scope.kind === "gateway" ? "tool's" : agentTool(scope) ? "agent step's" : "step's";
}

const stepParams = (scope: { workflowId: string; stepId: string }) => ({
  path: { workflow_id: scope.workflowId, step_id: scope.stepId },
});
const toolParams = (scope: { tool: string }) => ({ path: { tool: scope.tool } });
const regionParams = (id: string) => ({ path: { region_id: id } });

export const regionKeys = {
  all: ["regions"] as const,
  list: (scope: RegionScope) => ["regions", scopePath(scope)] as const,
};

/** The scope's regions and proposals, refetched when a region changes (a lead's change, a demotion) or a decision counts. */
export function useRegions(scope: RegionScope, enabled = true) {
  const queryClient = useQueryClient();
  useWorkspaceRoom();
  const refresh = () => void queryClient.invalidateQueries({ queryKey: regionKeys.all });
  useSocketEvent("region_changed", refresh);
  useSocketEvent("metrics_update", refresh);
  return useQuery({
    queryKey: regionKeys.list(scope),
    enabled,
    queryFn: ({ signal }) =>
      unwrap(
        scope.kind === "step"
          ? api.GET("/api/workflows/{workflow_id}/steps/{step_id}/regions", { params: stepParams(scope), signal })
          : api.GET("/api/gateway/tools/{tool}/regions", { params: toolParams(scope), signal }),
      ),
  });
}

/** A new region; a gateway tool's may name an `identity`: only that agent identity's calls (null: every identity's). */
export type RegionDraft = Schemas["GatewayRegionIn"];

export function useCreateRegion(scope: RegionScope) {
  const queryClient = useQueryClient();
  return useMutation<Region, unknown, RegionDraft>({
    mutationFn: (body) =>
      unwrap(
        scope.kind === "step"
          ? api.POST("/api/workflows/{workflow_id}/steps/{step_id}/regions", { params: stepParams(scope), body })
          : api.POST("/api/gateway/tools/{tool}/regions", { params: toolParams(scope), body }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: regionKeys.all }),
  });
}

export function useUpdateRegion() {
  const queryClient = useQueryClient();
  return useMutation<Region, unknown, { id: string } & Schemas["RegionPatch"]>({
    mutationFn: ({ id, ...body }) => unwrap(api.PATCH("/api/regions/{region_id}", { params: regionParams(id), body })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: regionKeys.all }),
  });
}

export function useDeleteRegion() {
  const queryClient = useQueryClient();
  return useMutation<unknown, unknown, { id: string }>({
    mutationFn: ({ id }) => unwrap(api.DELETE("/api/regions/{region_id}", { params: regionParams(id) })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: regionKeys.all }),
  });
}

export interface RegionModeChange {
  region: Region;
  mode: RegionMode;
  force?: boolean;
  reason?: string;
}

export function useSetRegionMode() {
  const queryClient = useQueryClient();
  return useMutation<Region, unknown, RegionModeChange>({
    mutationFn: ({ region, mode, force, reason }) =>
      unwrap(
        api.POST("/api/regions/{region_id}/mode", {
          params: regionParams(region.id),
          body: force ? { mode, force: true, reason } : { mode },
        }),
      ),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: regionKeys.all }),
  });
}

/**
 * The replay of a condition over the scope's latest decided calls (nothing is stored): a query keyed by the
 * condition, so an answer for an older text never overwrites a newer one; the last answer stays shown while the
 * next one loads.
 */
export function useReplay(scope: RegionScope, when: string, identity: string | null = null) {
  return useQuery({
    queryKey: ["replay", scopePath(scope), when, identity] as const,
    enabled: when.trim() !== "",
    placeholderData: keepPreviousData,
    retry: false,
    staleTime: 30_000,
    // a gateway region for one identity is replayed over that identity's calls only
    queryFn: ({ signal }) =>
      unwrap(
        scope.kind === "step"
          ? api.POST("/api/workflows/{workflow_id}/steps/{step_id}/replay", {
              params: stepParams(scope),
              body: { when },
              signal,
            })
          : api.POST("/api/gateway/tools/{tool}/replay", {
              params: toolParams(scope),
              body: identity ? { when, identity } : { when },
              signal,
            }),
      ),
  });
}
