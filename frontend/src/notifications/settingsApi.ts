/** Notifications beyond the open tab (issue 33): a person's own settings, a workspace's routes and webhook endpoints. */
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

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

type Schemas = components["schemas"];

/** A person's notification settings; `email_available` says whether this server can send email at all. */
export type NotificationSettings = Schemas["SettingsOut"];

/** One delivery of a webhook endpoint. */
export type Delivery = Schemas["DeliveryOut"];

/** An outgoing webhook endpoint; `secret` is only in the answer that made it. */
export type WebhookEndpoint = Schemas["EndpointOut"];

/** A routing rule: who hears which events, and where they escalate. */
export type Route = Schemas["RouteOut"];

/** Body of `POST /api/notifications/routes`. */
export type NewRoute = Schemas["RouteIn"];

export const notificationKeys = {
  settings: ["notifications", "settings"] as const,
  routes: ["notifications", "routes"] as const,
  webhooks: ["notifications", "webhooks"] as const,
};

export const fetchSettings = (signal?: AbortSignal) => unwrap(api.GET("/api/notifications/settings", { signal }));
export const saveSettings = (body: Schemas["SettingsIn"]) => unwrap(api.PUT("/api/notifications/settings", { body }));
export const fetchRoutes = (signal?: AbortSignal) => unwrap(api.GET("/api/notifications/routes", { signal }));
export const createRoute = (body: NewRoute) => unwrap(api.POST("/api/notifications/routes", { body }));
export const deleteRoute = async (id: string) => {
  await unwrap(api.DELETE("/api/notifications/routes/{route_id}", { params: { path: { route_id: id } } }));
};
export const fetchWebhooks = (signal?: AbortSignal) => unwrap(api.GET("/api/notifications/webhooks", { signal }));
export const createWebhook = (body: Schemas["EndpointIn"]) => unwrap(api.POST("/api/notifications/webhooks", { body }));
export const deleteWebhook = async (id: string) => {
  await unwrap(api.DELETE("/api/notifications/webhooks/{endpoint_id}", { params: { path: { endpoint_id: id } } }));
};
