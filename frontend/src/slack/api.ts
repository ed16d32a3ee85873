/** Slack: the workspace's Slack app (admins, /api/workspace/slack) and your own Slack member id (/api/workspace/slack/me). */
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

/** The workspace's Slack app as the server shows it (never its secrets). */
export type SlackSettings = components["schemas"]["SlackSettings"];
/** `POST /api/workspace/slack/test`: Slack's auth.test with the stored bot token. */
export type SlackTest = components["schemas"]["SlackTest"];

/** A change: an absent (or null) secret keeps the stored one, "" removes it. */
export type SlackSettingsChange = components["schemas"]["SlackSettingsArgs"];

/** Your own Slack member id (`GET/PUT /api/workspace/slack/me`). */
export type MySlackId = components["schemas"]["SlackUser"];

export const slackKeys = { settings: ["workspace", "slack"] as const, me: ["workspace", "slack", "me"] as const };

export const fetchSlackSettings = (signal?: AbortSignal) => unwrap(api.GET("/api/workspace/slack", { signal }));
export const saveSlackSettings = (body: SlackSettingsChange) => unwrap(api.PUT("/api/workspace/slack", { body }));
export const removeSlackSettings = () => unwrap(api.DELETE("/api/workspace/slack"));
export const fetchMySlackId = (signal?: AbortSignal) => unwrap(api.GET("/api/workspace/slack/me", { signal }));
export const saveMySlackId = (slack_user_id: string) =>
  unwrap(api.PUT("/api/workspace/slack/me", { body: { slack_user_id } }));
export const testSlack = () => unwrap(api.POST("/api/workspace/slack/test"));
