/** A workspace's own LLM provider for agent steps (admins): /api/workspace/llm. The API key is write-only. */
import { apiDelete, apiGet, apiPost, apiPut } from "../api/client";

export interface LlmProvider {
  base_url: string | null;
  model: string | null;
  api_key_set: boolean;
  updated_by: string | null;
  updated_at: string | null;
  /** which provider agent steps use now: this workspace's, the server's COACH_LLM_* settings, or none */
  in_use: "workspace" | "server" | "none";
  server_default: { configured: boolean; model: string | null };
}

export interface LlmProviderChange {
  base_url: string;
  model: string;
  /** a new key; absent keeps the stored one */
  api_key?: string;
  clear_api_key?: boolean;
}

export interface LlmTestResult {
  ok: boolean;
  answer?: string;
  failure?: string;
  source: string;
  model: string | null;
  elapsed_ms?: number;
}

/** The error code of a start refused because an agent step has no provider (the server's 409). */
export const LLM_PROVIDER_MISSING = "llm_provider_missing";
/** Where the setting lives in the web app. */
export const LLM_SETTINGS_PATH = "/settings#llm-provider";

export const llmKeys = { provider: ["workspace", "llm"] as const };

export const fetchLlmProvider = (signal?: AbortSignal) => apiGet<LlmProvider>("/api/workspace/llm", { signal });
export const saveLlmProvider = (body: LlmProviderChange) => apiPut<LlmProvider>("/api/workspace/llm", body);
export const removeLlmProvider = () => apiDelete("/api/workspace/llm");
export const testLlmProvider = () => apiPost<LlmTestResult>("/api/workspace/llm/test");
