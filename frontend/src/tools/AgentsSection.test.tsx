import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { renderApp, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import type { AgentIdentity } from "./agents";
import type { AuthSession } from "../api/types";

const ACTIVE: AgentIdentity = {
  id: "ag-1", name: "claude-code", description: "Ada's laptop", created_by: "ada@example.com",
  created_at: "2026-11-27T10:00:00Z", last_used_at: null, revoked_at: null, active: true,
};
const REVOKED: AgentIdentity = { ...ACTIVE, id: "ag-2", name: "old-bot", revoked_at: "2026-11-27T11:00:00Z", active: false };

async function openTools(handler: (call: RecordedCall) => Response | undefined = () => undefined, session = testSession) {
  const { calls } = stubSignedInFetch((call) => {
    const answer = handler(call);
    if (answer) return answer;
    if (call.url === "/api/tools" || call.url === "/api/tool-servers") return jsonResponse({ items: [] });
    if (call.url === "/api/agents" && call.method === "GET") return jsonResponse({ items: [ACTIVE, REVOKED] });
    return jsonResponse({});
  }, session);
  renderApp("/tools");
  await screen.findByRole("table", { name: "Every tool" });
  return { calls, user: userEvent.setup() };
}

describe("AgentsSection", () => {
  it("lists the agents, active and revoked, for admins", async () => {
    await openTools();
    const table = await screen.findByRole("table", { name: "Agent identities" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("claude-code");
    expect(rows[1]).toHaveTextContent("active");
    expect(rows[2]).toHaveTextContent("revoked");
    expect(within(rows[2]).queryByRole("button", { name: /Revoke/ })).toBeNull();
  });

  it("creates an agent and shows its token once, with the Claude Code command", async () => {
    const { calls, user } = await openTools((call) =>
      call.url === "/api/agents" && call.method === "POST"
        ? jsonResponse({ ...ACTIVE, id: "ag-3", name: "codex", token: "coach_agent_secret", mcp_path: "/mcp" }, 201)
        : undefined);
    await user.type(await screen.findByLabelText("Agent name"), "codex");
    await user.click(screen.getByRole("button", { name: "Create agent" }));
    expect(await screen.findByLabelText("The new agent's token")).toHaveValue("coach_agent_secret");
    expect(screen.getByText(/claude mcp add --transport http coach/)).toHaveTextContent("Bearer coach_agent_secret");
    expect(calls.find((c) => c.url === "/api/agents" && c.method === "POST")?.body).toEqual({ name: "codex", description: "" });
    await user.click(screen.getByRole("button", { name: "Done, hide it" }));
    expect(screen.queryByLabelText("The new agent's token")).toBeNull();
  });

  it("copies the token or the command shown, says Copied, and drops both once the agent is revoked", async () => {
    let revoked = false;
    const made = { ...ACTIVE, id: "ag-3", name: "codex" };
    const { user } = await openTools((call) => {
      if (call.url === "/api/agents" && call.method === "POST")
        return jsonResponse({ ...made, token: "coach_agent_secret", mcp_path: "/mcp" }, 201);
      if (call.url === "/api/agents/ag-3" && call.method === "DELETE") {
        revoked = true;
        return new Response(null, { status: 204 });
      }
      if (call.url === "/api/agents" && call.method === "GET")
        return jsonResponse({ items: [ACTIVE, { ...made, active: !revoked, revoked_at: revoked ? "2026-11-27T12:00:00Z" : null }] });
      return undefined;
    });
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    await user.type(await screen.findByLabelText("Agent name"), "codex");
    await user.click(screen.getByRole("button", { name: "Create agent" }));
    const box = await screen.findByRole("status", { name: /Copy its token now/ });
    const command = within(box).getByText(/claude mcp add/).textContent ?? "";
    expect(command).toContain("Bearer coach_agent_secret");

    await user.click(within(box).getByRole("button", { name: "Copy command" }));
    expect(writeText).toHaveBeenLastCalledWith(command);
    expect(await within(box).findByRole("button", { name: "✓ Copied" })).toBeInTheDocument();
    expect(box).toHaveTextContent("Copy command: copied to the clipboard.");
    await user.click(within(box).getByRole("button", { name: "Copy token" }));
    expect(writeText).toHaveBeenLastCalledWith("coach_agent_secret");

    await user.click(screen.getByRole("button", { name: "Revoke agent codex" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Revoke agent" }));
    expect(await screen.findByText(/Agent “codex” was revoked: its token is refused/)).toBeInTheDocument();
    expect(screen.queryByLabelText("The new agent's token")).toBeNull();
    expect(screen.queryByText(/coach_agent_secret/)).toBeNull();
    expect(screen.queryByText(/claude mcp add/)).toBeNull();
  });

  it("says why an agent was not created", async () => {
    const { user } = await openTools((call) =>
      call.url === "/api/agents" && call.method === "POST"
        ? errorResponse(409, "conflict", "this workspace already has an active agent named 'claude-code'")
        : undefined);
    await user.type(await screen.findByLabelText("Agent name"), "claude-code");
    await user.click(screen.getByRole("button", { name: "Create agent" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("already has an active agent");
  });

  it("revokes after a confirmation", async () => {
    const { calls, user } = await openTools((call) =>
      call.method === "DELETE" ? new Response(null, { status: 204 }) : undefined);
    await user.click(await screen.findByRole("button", { name: "Revoke agent claude-code" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Revoke agent" }));
    expect(calls.some((c) => c.url === "/api/agents/ag-1" && c.method === "DELETE")).toBe(true);
  });

  it("is not shown to someone who is not an admin", async () => {
    const operator: AuthSession = { ...testSession, workspaces: [{ ...testSession.workspaces[0], role: "operator" }] };
    const { calls } = await openTools(undefined, operator);
    expect(screen.queryByRole("heading", { name: "Agents (MCP gateway)" })).toBeNull();
    expect(calls.some((c) => c.url === "/api/agents")).toBe(false);
  });
});
