import { useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useNavigate } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import type { WorkflowMetrics } from "../api/metrics";
import { dashboardKeys } from "../dashboards/queries";
import type { ItemList } from "../dashboards/types";
import { plural } from "../format";
import { useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import type { GatewayToolChangedEvent } from "../tools/gatewayLearning";
import {
  isDemotion,
  noticeBody,
  noticeFromGatewayEvent,
  noticeFromLevelEvent,
  noticeFromPackEvent,
  noticeTitle,
} from "./describe";
import { addLiveNotice, useNoticeWorkspace } from "./noticeStore";
import { NotificationsSwitch } from "./NotificationsSwitch";
import "./notifications.css";
import { notificationsState, notify, useNotificationsState } from "./preference";
import type { LevelEventWithSeq, PackEventWithSeq } from "./types";
import { useQueueArrivals } from "./useQueueArrivals";

/** A workflow's name for a notice or a notification: from the dashboard's cache, else asked (rare: news). */
async function workflowName(queryClient: QueryClient, id: string): Promise<string | null> {
  const cached = queryClient.getQueryData<ItemList<WorkflowMetrics>>(dashboardKeys.workflowMetricsList);
  const known = cached?.items?.find((w) => w.workflow_id === id)?.name;
  if (known) return known;
  try {
    const workflow = await queryClient.fetchQuery({
      queryKey: ["notifications", "workflow-name", id],
      queryFn: ({ signal }) => unwrap(api.GET("/api/workflows/{workflow_id}", { params: { path: { workflow_id: id } }, signal })),
      staleTime: 60_000,
    });
    return workflow.name || null;
  } catch {
    return null; // e.g. deleted since: the notice says "Workflow <id>"
  }
}

/** The demotions this page has notified (workspace:seq), so a demotion pushed twice is shown once. */
const notified = new Set<string>();

/**
 * The header's notification centre: the "Notifications" switch, and on every page the listeners that keep the
 * session's notices (demotions, learned-rule changes: the dashboard shows them) and, when notifications are on,
 * show a browser notification for new work in an empty queue and for each demotion.
 */
export function NotificationsCenter() {
  const workspace = useNoticeWorkspace();
  const state = useNotificationsState();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  useWorkspaceRoom();

  useSocketEvent<LevelEventWithSeq>("workflow_level_changed", (event) => {
    if (!event || typeof event.workflow_id !== "string" || !isDemotion(event)) return;
    const notice = noticeFromLevelEvent(event);
    const seen = notice ? `${workspace}:${notice.id}` : null;
    const notifying = notificationsState() === "on" && !(seen && notified.has(seen));
    if (seen && notifying) notified.add(seen);
    // the notice is kept with its workflow's name, so that the dashboard says it at once
    void workflowName(queryClient, event.workflow_id).then((name) => {
      if (notice) addLiveNotice(workspace, { ...notice, workflow_name: name });
      if (!notifying) return;
      // (a server without audit_seq: notified all the same, with no notice kept)
      const described = notice ?? noticeFromLevelEvent({ ...event, audit_seq: 0 })!;
      notify(noticeTitle(described, name ?? `Workflow ${event.workflow_id}`), {
        body: noticeBody(described),
        tag: notice ? `coach-demotion-${workspace}-${notice.id}` : undefined,
        onClick: () => navigate("/dashboard"),
      });
    });
  });

  useSocketEvent<GatewayToolChangedEvent>("gateway_tool_changed", (event) => {
    const notice = event && typeof event.tool === "string" ? noticeFromGatewayEvent(event) : null;
    if (!notice) return;
    addLiveNotice(workspace, notice);
    const seen = `${workspace}:${notice.id}`;
    if (notificationsState() !== "on" || notified.has(seen)) return;
    notified.add(seen);
    notify(noticeTitle(notice, ""), {
      body: noticeBody(notice),
      tag: `coach-demotion-${workspace}-${notice.id}`,
      onClick: () => navigate("/tools"),
    });
  });

  useSocketEvent<PackEventWithSeq>("correction_pack_changed", (event) => {
    if (!event || typeof event.pack_id !== "string") return;
    const notice = noticeFromPackEvent(event);
    if (notice) void workflowName(queryClient, event.workflow_id).then((name) => addLiveNotice(workspace, { ...notice, workflow_name: name }));
  });

  useQueueArrivals(state === "on", workspace, (page) => {
    const newest = page.items[0];
    const more = page.total > 1 ? ` (${plural(page.total, "item")} waiting)` : "";
    notify("New work in the queue", {
      body: newest ? `${newest.workflow_name || "A workflow"}: step “${newest.step_id}”${more}` : undefined,
      tag: `coach-queue-${workspace}`,
      onClick: () => navigate("/queue"),
    });
  });

  return <NotificationsSwitch state={state} />;
}
