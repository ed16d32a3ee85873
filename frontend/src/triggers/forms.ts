import { ApiError, errorMessage } from "../api/client";

/** What each trigger panel of a workflow gets (TriggersSection). */
export interface TriggerProps {
  workflowId: string;
  workflowName: string;
  variables?: Record<string, unknown>;
  lead: boolean;
}

/** Parses a JSON object typed in a form field; undefined (with the reason) when it is not one. */
export function parseObject(text: string): { value?: Record<string, unknown>; problem?: string } {
  if (!text.trim()) return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return { value: value as Record<string, unknown> };
    return { problem: "must be a JSON object" };
  } catch (error) {
    return { problem: `not JSON: ${(error as Error).message}` };
  }
}

/** The server's 422 as "field: message" lines. */
export function problems(error: unknown): string {
  if (error instanceof ApiError && error.details && typeof error.details === "object") {
    const lines = Object.entries(error.details as Record<string, unknown>).map(
      ([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.join("; ") : String(messages)}`,
    );
    if (lines.length) return lines.join(" · ");
  }
  return errorMessage(error);
}

