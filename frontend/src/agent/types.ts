/** An agent step's conversation (`GET /api/executions/<id>/steps/<step_id>/transcript`, the `agent_messages` event). */
import type { PolicyVerdict } from "../approvals/types";

export interface AgentToolCall {
  id: string;
  name: string;
  /** The arguments as the LLM wrote them (JSON text, maybe invalid). */
  arguments: string;
}

export interface AgentMessage {
  seq: number;
  message_id?: string | null;
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  content: string | null;
  turn: number;
  /** user messages: why Coach added them. */
  kind?: "goal" | "answer" | "approved" | "repair" | (string & {}) | null;
  tool_calls?: AgentToolCall[];
  reasoning?: string | null;
  /** assistant: CONFIRM_DATA, REQUEST_APPROVAL or STAGE_COMPLETE when its text holds one. */
  marker?: string | null;
  asked?: boolean;
  tool_call_id?: string | null;
  /** tool: the name the LLM called, and the registered tool it names. */
  name?: string | null;
  tool?: string | null;
  arguments?: unknown;
  raw_arguments?: string | null;
  /** What ran: a learned rule or a correction may have changed the arguments. */
  params?: unknown;
  status?: "pending" | "review" | "ready" | "done" | (string & {});
  policy?: PolicyVerdict | null;
  /** allow | deny | invalid, or a person's accept | correct | manual | skip | reject. */
  decision?: string | null;
  suggestion_id?: string | null;
  source?: string | null;
  error?: boolean;
  /** Sent shortened to fit the step's context budget. */
  trimmed?: boolean;
}

export interface Transcript {
  execution_id: string;
  step_id: string;
  status: string;
  messages: AgentMessage[];
}
