/** A workspace's own LLM provider for agent steps (admins): /api/workspace/llm. The API key is write-only. */
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

type Schemas = components["schemas"];

/** The workspace's provider as the server shows it (`in_use`: which provider agent steps use now). */
export type LlmProvider = Schemas["Provider"];
/** Body of `PUT /api/workspace/llm` (`api_key` absent keeps the stored one). */
export type LlmProviderChange = Schemas["ProviderArgs"];
/** What `POST /api/workspace/llm/test` answers. */
export type LlmTestResult = Schemas["Test"];

/** The error code of a start refused because an agent step has no provider (the server's 409). */
export const LLM_PROVIDER_MISSING = "llm_provider_missing";
/** Where the setting lives in the web app. */
export const LLM_SETTINGS_PATH = "/settings#llm-provider";

export const llmKeys = { provider: ["workspace", "llm"] as const };

export const fetchLlmProvider = (signal?: AbortSignal) => unwrap(api.GET("/api/workspace/llm", { signal }));
export const saveLlmProvider = (body: LlmProviderChange) => unwrap(api.PUT("/api/workspace/llm", { body }));
export const removeLlmProvider = () => unwrap(api.DELETE("/api/workspace/llm"));
export const testLlmProvider = () => unwrap(api.POST("/api/workspace/llm/test"));
