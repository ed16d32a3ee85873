/** Shapes of GET /api/tools and /api/tool-servers (api/tool_servers.py). */
export type Risk = "read" | "write" | "external" | "destructive";

export interface RegistryTool {
  name: string;
  description: string;
  risk: Risk;
  params_schema: Record<string, unknown>;
  source: "builtin" | "entry_point" | "mcp";
  server: string | null;
  annotations: Record<string, unknown> | null;
  trusted: boolean | null;
}

export interface ServerTool {
  name: string;
  full_name: string;
  description: string;
  input_schema: Record<string, unknown> | null;
  annotations: Record<string, unknown>;
  annotated_risk: Risk;
  risk: Risk;
  problem: string | null;
}

export interface ToolServer {
  id: string;
  name: string;
  description: string;
  transport: "http" | "stdio";
  url: string;
  command: string[];
  header_names: string[];
  has_secret: boolean;
  trusted: boolean;
  enabled: boolean;
  risk_overrides: Record<string, Risk>;
  tools: ServerTool[];
  listed_at: string | null;
  last_error: string;
  revision: number;
}

export interface ToolServerIn {
  name: string;
  description?: string;
  transport: "http" | "stdio";
  url?: string;
  command?: string[];
  headers?: Record<string, string>;
  bearer_token?: string;
  trusted?: boolean;
  enabled?: boolean;
  risk_overrides?: Record<string, Risk>;
}
