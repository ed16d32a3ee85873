/** Shapes of GET /api/tools and /api/tool-servers (api/tool_servers.py), named from the generated schema. */
import type { components } from "../api/schema";

type Schemas = components["schemas"];

export type Risk = Schemas["RegistryTool"]["risk"];

/** A tool of the workspace's registry (`GET /api/tools`). */
export type RegistryTool = Schemas["RegistryTool"];

/** A tool an MCP server lists. */
export type ServerTool = Schemas["ServerToolOut"];

/** An MCP server of the workspace. */
export type ToolServer = Schemas["ToolServerOut"];

/** Body of `POST /api/tool-servers`. */
export type ToolServerIn = Schemas["ToolServerIn"];
