/** Notifications beyond the open tab (issue 33): a person's own settings, a workspace's routes and webhook endpoints. */
import { apiDelete, apiGet, apiPost, apiPut } from "../api/client";

export const EVENT_KINDS = [
  "approval_requested",
  "review_held",
  "suggestion_waiting",
  "clarification_asked",
  "deadline_near",
  "demotion",
  "run_failed",
  "escalation",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const KIND_LABELS: Record<EventKind, string> = {
  approval_requested: "An approval is requested",
  review_held: "A call is held for review",
  suggestion_waiting: "A suggestion waits in coaching",
  clarification_asked: "A run asks a question",
  deadline_near: "A deadline is near",
  demotion: "A workflow is demoted",
  run_failed: "A run failed",
  escalation: "A review escalated to you",
};

export interface NotificationSettings {
  email: boolean;
  kinds: Partial<Record<EventKind, boolean>>;
  /** Web Push to the browsers this person subscribed ("Notify this browser"), and per event kind */
  push: boolean;
  push_kinds: Partial<Record<EventKind, boolean>>;
  quiet_start: string | null;
  quiet_end: string | null;
  timezone: string;
  /** read only: whether this server can send email at all (COACH_SMTP_HOST is set) */
  email_available?: boolean;
}

export interface Delivery {
  id: string;
  event: EventKind;
  status: "pending" | "sending" | "sent" | "failed";
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  sent_at: string | null;
  created_at: string;
}

export interface WebhookEndpoint {
  id: string;
  name: string;
  url: string;
  events: EventKind[];
  enabled: boolean;
  failing: boolean;
  consecutive_failures: number;
  last_status: number | null;
  last_error: string | null;
  last_delivery_at: string | null;
  deliveries: Delivery[];
  /** only in the answer that made it */
  secret?: string;
}

export interface Route {
  id?: string;
  name: string;
  events: EventKind[];
  workflow_id: string | null;
  tool: string | null;
  users: string[];
  endpoint_id: string | null;
  escalate_after_s: number | null;
  escalate_users: string[];
  escalate_endpoint_id: string | null;
  /** a Slack channel id or #name: the route's reviews are posted there instead of the app's default channel */
  slack_channel: string | null;
  enabled: boolean;
}

export const notificationKeys = {
  settings: ["notifications", "settings"] as const,
  routes: ["notifications", "routes"] as const,
  webhooks: ["notifications", "webhooks"] as const,
};

export const fetchSettings = (signal?: AbortSignal) =>
  apiGet<NotificationSettings>("/api/notifications/settings", { signal });
export const saveSettings = (body: NotificationSettings) =>
  apiPut<NotificationSettings>("/api/notifications/settings", body);
export const fetchRoutes = (signal?: AbortSignal) => apiGet<{ items: Route[] }>("/api/notifications/routes", { signal });
export const createRoute = (body: Route) => apiPost<Route>("/api/notifications/routes", body);
export const deleteRoute = (id: string) => apiDelete<void>(`/api/notifications/routes/${encodeURIComponent(id)}`);
export const fetchWebhooks = (signal?: AbortSignal) =>
  apiGet<{ items: WebhookEndpoint[] }>("/api/notifications/webhooks", { signal });
export const createWebhook = (body: { name: string; url: string; events: EventKind[] }) =>
  apiPost<WebhookEndpoint>("/api/notifications/webhooks", body);
export const deleteWebhook = (id: string) => apiDelete<void>(`/api/notifications/webhooks/${encodeURIComponent(id)}`);
