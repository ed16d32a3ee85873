import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import { paramsSummary } from "./ToolsPage";
import type { RegistryTool, ToolServer } from "./types";

const TOOLS: RegistryTool[] = [
  { name: "echo", description: "Returns its params", risk: "read", params_schema: { type: "object" }, source: "builtin",
    server: null, annotations: null, trusted: null },
  { name: "orders.lookup", description: "Look an order up", risk: "destructive", source: "mcp", server: "orders",
    annotations: { readOnlyHint: true }, trusted: false,
    params_schema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] } },
];

const SERVER: ToolServer = {
  id: "s-1", name: "orders", description: "", transport: "stdio", url: "", command: ["python", "orders.py"],
  header_names: [], has_secret: false, trusted: false, enabled: true, risk_overrides: {}, revision: 1,
  listed_at: "2026-11-24T03:00:00Z", last_error: "",
  created_by: "admin@example.com", created_at: "2026-11-24T02:00:00Z", updated_at: "2026-11-24T03:00:00Z",
  tools: [{ name: "lookup", full_name: "orders.lookup", description: "", input_schema: { type: "object" }, annotations: {},
            annotated_risk: "read", risk: "destructive", problem: null },
          { name: "bad", full_name: "orders.bad", description: "", input_schema: null, annotations: {},
            annotated_risk: "destructive", risk: "destructive", problem: "inputSchema is not a valid JSON Schema" }],
};

async function openTools(handler: (call: RecordedCall) => Response | undefined = () => undefined) {
  const { calls } = stubSignedInFetch((call) => {
    const answer = handler(call);
    if (answer) return answer;
    if (call.url === "/api/tools") return jsonResponse({ items: TOOLS });
    if (call.url === "/api/tool-servers" && call.method === "GET") return jsonResponse({ items: [SERVER] });
    return jsonResponse({});
  }, testSession);
  renderApp("/tools");
  await screen.findByRole("table", { name: "Every tool" });
  return { calls, user: userEvent.setup() };
}

describe("ToolsPage", () => {
  it("lists every tool with risk, source and params", async () => {
    await openTools();
    const rows = within(screen.getByRole("table", { name: "Every tool" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("echo");
    expect(rows[1]).toHaveTextContent("built in");
    expect(rows[2]).toHaveTextContent("orders.lookup");
    expect(rows[2]).toHaveTextContent("destructive");
    expect(rows[2]).toHaveTextContent("MCP server orders");
    expect(rows[2]).toHaveTextContent("order_id: string*");
  });

  it("shows the servers with the tools they cannot offer, and tests one", async () => {
    const { calls, user } = await openTools((call) =>
      call.url === "/api/tool-servers/s-1/refresh" ? jsonResponse({ ...SERVER, last_error: "MCP server 'orders' did not complete the handshake" }) : undefined);
    expect((await screen.findByText("orders.bad")).closest("li")).toHaveTextContent("cannot be used: inputSchema is not a valid JSON Schema");
    await user.click(screen.getByRole("button", { name: "Test (list tools)" }));
    expect(calls.some((c) => c.url === "/api/tool-servers/s-1/refresh" && c.method === "POST")).toBe(true);
  });

  it("adds a server and puts the server's 422 on the field it names", async () => {
    const { calls, user } = await openTools((call) =>
      call.url === "/api/tool-servers" && call.method === "POST"
        ? errorResponse(422, "validation_failed", "the tool server is not valid", { command: ["not allowed"] })
        : undefined);
    await user.click(screen.getByRole("button", { name: "Add MCP server" }));
    await user.type(screen.getByLabelText("Name"), "evil");
    await user.selectOptions(screen.getByLabelText("Transport"), "stdio");
    await user.type(screen.getByLabelText("Command"), "rm -rf /");
    await user.click(screen.getByRole("button", { name: "Add and list tools" }));
    expect(await screen.findByText("not allowed")).toBeInTheDocument();
    const post = calls.find((c) => c.url === "/api/tool-servers" && c.method === "POST");
    expect(post?.body).toEqual({ name: "evil", transport: "stdio", trusted: false, command: ["rm", "-rf", "/"] });
  });

  it("summarises a schema's params", () => {
    expect(paramsSummary({ type: "object", properties: { a: { type: "integer" }, r: { enum: ["x", "y"] } }, required: ["a"] }))
      .toBe("a: integer*, r: x | y");
  });
});
