/** Slack: the workspace's Slack app (admins, /api/workspace/slack) and your own Slack member id (/api/workspace/slack/me). */
import { apiDelete, apiGet, apiPost, apiPut } from "../api/client";
import type { components } from "../api/schema";

/** The workspace's Slack app as the server shows it (never its secrets). */
export type SlackSettings = components["schemas"]["SlackSettings"];
/** `POST /api/workspace/slack/test`: Slack's auth.test with the stored bot token. */
export type SlackTest = components["schemas"]["SlackTest"];

/** A change: an absent (or null) secret keeps the stored one, "" removes it. */
export interface SlackSettingsChange {
  bot_token?: string | null;
  signing_secret?: string | null;
  default_channel?: string | null;
}

export interface MySlackId {
  slack_user_id: string | null;
}

export const slackKeys = { settings: ["workspace", "slack"] as const, me: ["workspace", "slack", "me"] as const };

export const fetchSlackSettings = (signal?: AbortSignal) => apiGet<SlackSettings>("/api/workspace/slack", { signal });
export const saveSlackSettings = (body: SlackSettingsChange) => apiPut<SlackSettings>("/api/workspace/slack", body);
export const removeSlackSettings = () => apiDelete("/api/workspace/slack");
export const fetchMySlackId = (signal?: AbortSignal) => apiGet<MySlackId>("/api/workspace/slack/me", { signal });
export const saveMySlackId = (slack_user_id: string) => apiPut<MySlackId>("/api/workspace/slack/me", { slack_user_id });
export const testSlack = () => apiPost<SlackTest>("/api/workspace/slack/test");
