/** An agent step's conversation (`GET /api/executions/<id>/steps/<step_id>/transcript`, the `agent_messages` event). */
import type { components } from "../api/schema";

type Schemas = components["schemas"];

/** A call an assistant message asks for, as the LLM wrote it (its arguments: JSON text, maybe invalid). */
export type AgentToolCall = Schemas["ToolCall"];

export type AgentMessage = Schemas["AgentMessage"];

export type Transcript = Schemas["Transcript"];
