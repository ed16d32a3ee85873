/**
 * Server state of the lead pages: query keys, fetchers and the hooks around
 * them. Every key starts with the resource, so one invalidation refreshes
 * every view of it (a socket event, a promotion, a pack toggle).
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { api, unwrap } from "../api/typed";
import { useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import { fetchWorkflowMetrics, workflowMetricsKey } from "../api/metrics";
import type { LevelChangedEvent, MetricsUpdateEvent, StepMode, WorkflowMetrics, WorkflowMode } from "../api/metrics";
import type { components } from "../api/schema";
import type { CorrectionPack, PackChange, PackChangedEvent, PackExport } from "./types";

type Schemas = components["schemas"];
/** `GET /api/metrics/workflows`: every workflow's metrics. */
type WorkflowMetricsList = Schemas["WorkflowMetricsList"];
/** `GET /api/correction-packs`. */
type PackList = Schemas["PackList"];

export const dashboardKeys = {
  metrics: ["metrics"] as const,
  workflowMetricsList: ["metrics", "workflows"] as const,
  workflowMetrics: workflowMetricsKey,
  globalMetrics: ["metrics", "global"] as const,
  operatorMetrics: ["metrics", "operators"] as const,
  packs: ["correction-packs"] as const,
  packList: (workflowId: string | null) => ["correction-packs", { workflowId }] as const,
  workflow: (id: string, version: number | null) => ["workflow", id, { version }] as const,
  auditActions: ["audit", "actions"] as const,
};

/** The actions audit events can have, from the server (they only change with a new server). */
export function useAuditActions() {
  return useQuery({
    queryKey: dashboardKeys.auditActions,
    queryFn: ({ signal }) => unwrap(api.GET("/api/audit/actions", { signal })),
    staleTime: Infinity,
  });
}

export function useWorkflowMetricsList() {
  return useQuery({
    queryKey: dashboardKeys.workflowMetricsList,
    queryFn: ({ signal }) => unwrap(api.GET("/api/metrics/workflows", { signal })),
  });
}

export function useWorkflowMetrics(id: string) {
  return useQuery({
    queryKey: dashboardKeys.workflowMetrics(id),
    queryFn: ({ signal }) => fetchWorkflowMetrics(id, signal),
  });
}

/** Leads only: an operator gets a 403, shown as such (see LeadsOnly). */
export function useGlobalMetrics() {
  return useQuery({
    queryKey: dashboardKeys.globalMetrics,
    queryFn: ({ signal }) => unwrap(api.GET("/api/metrics/global", { signal })),
  });
}

/** Leads only, like the global metrics. */
export function useOperatorMetrics() {
  return useQuery({
    queryKey: dashboardKeys.operatorMetrics,
    queryFn: ({ signal }) => unwrap(api.GET("/api/metrics/operators", { signal })),
  });
}

export function useWorkflowDefinition(id: string, version: number | null) {
  return useQuery({
    queryKey: dashboardKeys.workflow(id, version),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/workflows/{workflow_id}", {
          params: { path: { workflow_id: id }, query: version ? { version } : {} },
          signal,
        }),
      ),
  });
}

export function usePacks(workflowId: string | null) {
  return useQuery({
    queryKey: dashboardKeys.packList(workflowId),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/correction-packs", { params: { query: workflowId ? { workflow_id: workflowId } : {} }, signal })),
  });
}

/** Everything that shows a workflow's level or mode (metrics, definitions, the workflow list). */
function invalidateWorkflowViews(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: dashboardKeys.metrics });
  void queryClient.invalidateQueries({ queryKey: ["workflow"] });
  void queryClient.invalidateQueries({ queryKey: ["workflows"] });
}

export interface ModeChange {
  workflowId: string;
  name: string;
  mode: WorkflowMode;
  /** an admin's promotion that the evidence does not allow, with the reason the audit log keeps */
  force?: boolean;
  reason?: string;
}

/** A step the promotion leaves without evidence of its own (the server's `steps_not_ready`). */
export type NotReadyStep = components["schemas"]["StepNotReady"];

/** One of the decisions behind a step's (or a workflow's) readiness, with what it did to the e-value. */
export type StepDecision = components["schemas"]["StepDecision"];

/** `GET /api/metrics/workflows/<id>/steps/<step_id>/decisions`: read when a lead opens the list. */
export function useStepDecisions(workflowId: string, stepId: string, enabled: boolean) {
  return useQuery({
    queryKey: ["step-decisions", workflowId, stepId],
    enabled,
    queryFn: () =>
      unwrap(
        api.GET("/api/metrics/workflows/{workflow_id}/steps/{step_id}/decisions", {
          params: { path: { workflow_id: workflowId, step_id: stepId }, query: { limit: 50 } },
        }),
      ),
  });
}

/** `GET /api/metrics/workflows/<id>/decisions`: the workflow's latest decisions, its steps pooled. */
export function useWorkflowDecisions(workflowId: string, limit = 10) {
  return useQuery({
    queryKey: ["metrics", "decisions", workflowId, limit],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/metrics/workflows/{workflow_id}/decisions", {
          params: { path: { workflow_id: workflowId }, query: { limit } },
          signal,
        }),
      ),
  });
}

/** Each operator's time to decide and fast accepts, over a workflow's (or one step's) decisions (leads). */
export type Reviewers = components["schemas"]["Reviewers"];
export type Reviewer = components["schemas"]["Reviewer"];
/** The workspace's floor of attentive reviews: an accept faster than it is a fast accept. */
export type ReviewFloor = components["schemas"]["ReviewFloor"];

/**
 * `GET /api/metrics/workflows/<id>/reviewers[?step_id=]`: under "metrics", so a decision's live update refreshes
 * it; the previous scope's table stays while another scope loads.
 */
export function useReviewers(workflowId: string, stepId: string | null) {
  return useQuery({
    queryKey: ["metrics", "reviewers", workflowId, { stepId }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/metrics/workflows/{workflow_id}/reviewers", {
          params: { path: { workflow_id: workflowId }, query: stepId ? { step_id: stepId } : {} },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

const reviewFloorKey = ["workspace", "reviews"] as const;

/** `GET /api/workspace/reviews`: every member may read it. */
export function useReviewFloor() {
  return useQuery({
    queryKey: reviewFloorKey,
    queryFn: ({ signal }) => unwrap(api.GET("/api/workspace/reviews", { signal })),
  });
}

/** `PUT /api/workspace/reviews` {attentive_floor_ms} (leads; null: back to the default); the figures follow. */
export function useSetReviewFloor() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (floorMs: number | null) =>
      unwrap(api.PUT("/api/workspace/reviews", { body: { attentive_floor_ms: floorMs } })),
    onSuccess: (floor) => {
      queryClient.setQueryData(reviewFloorKey, floor);
      void queryClient.invalidateQueries({ queryKey: ["metrics", "reviewers"] });
    },
  });
}

/** `POST /api/workflows/<id>/mode`: promote to AUTO or demote to coaching. */
export function useSetMode() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ workflowId, mode, force, reason }: ModeChange) =>
      unwrap(
        api.POST("/api/workflows/{workflow_id}/mode", {
          params: { path: { workflow_id: workflowId } },
          body: force ? { mode, force: true, reason } : { mode },
        }),
      ),
    onSuccess: (_, { workflowId, mode }) => {
      // Show the new mode at once; the refetch below brings everything else.
      queryClient.setQueryData<WorkflowMetricsList>(dashboardKeys.workflowMetricsList, (list) =>
        list && { items: list.items.map((w) => (w.workflow_id === workflowId ? { ...w, mode } : w)) },
      );
      invalidateWorkflowViews(queryClient);
    },
  });
}

export interface StepModeChange {
  workflowId: string;
  workflowName: string;
  stepId: string;
  mode: StepMode;
  force?: boolean;
  reason?: string;
}

/** `POST /api/workflows/<id>/steps/<step_id>/mode`: promote one step, set it back to coaching, or pin it. */
export function useSetStepMode() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ workflowId, stepId, mode, force, reason }: StepModeChange) =>
      unwrap(
        api.POST("/api/workflows/{workflow_id}/steps/{step_id}/mode", {
          params: { path: { workflow_id: workflowId, step_id: stepId } },
          body: force ? { mode, force: true, reason } : { mode },
        }),
      ),
    onSuccess: () => invalidateWorkflowViews(queryClient),
  });
}

/** A workflow's level thresholds; `auto_alpha` is the error level of the AUTO readiness and demotion tests (0 < α < 0.5). */
export type Thresholds = Schemas["Thresholds"];

/** `PUT /api/workflows/<id>/thresholds`: the workflow's level thresholds (docs/design.md#metrics-and-learning-levels). */
export function useSetThresholds() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ workflowId, thresholds }: { workflowId: string; thresholds: Thresholds }) =>
      unwrap(api.PUT("/api/workflows/{workflow_id}/thresholds", { params: { path: { workflow_id: workflowId } }, body: thresholds })),
    onSuccess: () => invalidateWorkflowViews(queryClient),
  });
}

/** `PATCH /api/correction-packs/<id>` {enabled}. */
export function useSetPackEnabled() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ pack, enabled }: { pack: CorrectionPack; enabled: boolean }) =>
      unwrap(api.PATCH("/api/correction-packs/{pack_id}", { params: { path: { pack_id: pack.id } }, body: { enabled } })),
    onSuccess: (updated) => {
      queryClient.setQueriesData<PackList>({ queryKey: dashboardKeys.packs }, (list) =>
        list && { ...list, items: list.items.map((p) => (p.id === updated.id ? updated : p)) },
      );
      void queryClient.invalidateQueries({ queryKey: dashboardKeys.packs });
    },
  });
}

/** `POST /api/correction-packs/<id>/remove-change` {field, before, after}: a lead drops one wrong change. */
export function useRemovePackChange() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ pack, change }: { pack: CorrectionPack; change: Pick<PackChange, "field" | "before" | "after"> }) =>
      unwrap(
        api.POST("/api/correction-packs/{pack_id}/remove-change", {
          params: { path: { pack_id: pack.id } },
          body: { field: change.field, before: change.before, after: change.after },
        }),
      ),
    onSuccess: (updated) => {
      queryClient.setQueriesData<PackList>({ queryKey: dashboardKeys.packs }, (list) =>
        list && { ...list, items: list.items.map((p) => (p.id === updated.id ? updated : p)) },
      );
      void queryClient.invalidateQueries({ queryKey: dashboardKeys.packs });
    },
  });
}

export function fetchPackExport(id: string): Promise<PackExport> {
  return unwrap(api.GET("/api/correction-packs/{pack_id}/export", { params: { path: { pack_id: id } } }));
}

/** `POST /api/correction-packs/import` with an export's body. */
export function useImportPack() {
  const queryClient = useQueryClient();
  return useMutation({
    // the JSON of a file or of pasted text, which the server checks as an export (a 422 names each wrong field)
    mutationFn: (body: Record<string, unknown>) =>
      unwrap(api.POST("/api/correction-packs/import", { body: body as PackExport })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: dashboardKeys.packs }),
  });
}

/**
 * Keeps the packs live: joins the workspace room and refetches the packs when
 * a learned rule starts or stops applying (`correction_pack_changed`).
 * `onChanged` hears each change, to announce it.
 */
export function useLivePacks(onChanged?: (event: PackChangedEvent) => void) {
  useWorkspaceRoom();
  const queryClient = useQueryClient();
  useSocketEvent<PackChangedEvent>("correction_pack_changed", (event) => {
    if (!event || typeof event.pack_id !== "string") return;
    onChanged?.(event);
    void queryClient.invalidateQueries({ queryKey: dashboardKeys.packs });
  });
}

/** A burst of decisions refetches once, this long after the last one. */
export const LIVE_REFETCH_DELAY_MS = 250;

/**
 * Keeps the dashboards live: joins the workspace room, patches a workflow's
 * row from each `metrics_update` at once, and refetches the metrics (and,
 * on `workflow_level_changed`, everything showing a level) shortly after.
 * `onLevelChanged` hears each level change, to announce it.
 */
export function useLiveMetrics(onLevelChanged?: (event: LevelChangedEvent) => void) {
  useWorkspaceRoom();
  const queryClient = useQueryClient();
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const everythingDue = useRef(false);

  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const refetchSoon = (everything: boolean) => {
    everythingDue.current ||= everything;
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      const all = everythingDue.current;
      everythingDue.current = false;
      if (all) invalidateWorkflowViews(queryClient);
      else void queryClient.invalidateQueries({ queryKey: dashboardKeys.metrics });
    }, LIVE_REFETCH_DELAY_MS);
  };

  useSocketEvent<MetricsUpdateEvent>("metrics_update", (update) => {
    if (!update || typeof update.workflow_id !== "string") return;
    const { workflow_id: id, ...snapshot } = update;
    queryClient.setQueryData<WorkflowMetricsList>(dashboardKeys.workflowMetricsList, (list) =>
      list && { items: list.items.map((w) => (w.workflow_id === id ? { ...w, ...snapshot } : w)) },
    );
    queryClient.setQueryData<WorkflowMetrics>(dashboardKeys.workflowMetrics(id), (current) =>
      current && { ...current, ...snapshot },
    );
    refetchSoon(false);
  });

  useSocketEvent<LevelChangedEvent>("workflow_level_changed", (event) => {
    if (!event || typeof event.workflow_id !== "string") return;
    onLevelChanged?.(event);
    refetchSoon(true);
  });
}
