import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { AuthSession } from "../api/types";
import { renderApp, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, jsonResponse, type RecordedCall } from "../test/utils";
import type { GatewaySettings } from "./gatewayBuiltins";

const AVAILABLE: NonNullable<GatewaySettings["available"]> = [
  { name: "echo", gateway_name: "coach.echo", risk: "read", description: "Returns its params unchanged.", exposed: false },
  { name: "http.request", gateway_name: "coach.http.request", risk: "external", description: "Makes an HTTP request.",
    exposed: true },
  { name: "shell.run", gateway_name: "coach.shell.run", risk: "destructive", description: "Runs a command.",
    exposed: false },
];
const SAVED: GatewaySettings = { builtin_tools: ["http.request"], available: AVAILABLE };

async function openTools(handler: (call: RecordedCall) => Response | undefined = () => undefined, session = testSession) {
  const { calls } = stubSignedInFetch((call) => {
    const answer = handler(call);
    if (answer) return answer;
    if (call.url === "/api/workspace/gateway" && call.method === "GET") return jsonResponse(SAVED);
    if (call.url === "/api/gateway/tools") return jsonResponse({ items: [], identities: {}, spot_check_rate: 0.1 });
    if (call.url === "/api/tools" || call.url === "/api/tool-servers" || call.url === "/api/agents")
      return jsonResponse({ items: [] });
    return jsonResponse({});
  }, session);
  renderApp("/tools");
  const form = await screen.findByRole("form", { name: "Built-in tools for agents" });
  await within(form).findByRole("checkbox", { name: /coach\.echo/ });
  return { calls, form, user: userEvent.setup() };
}

describe("BuiltinToolsSection", () => {
  it("shows each built-in with its agent name, risk and description, the exposed ones ticked", async () => {
    const { form } = await openTools();
    expect(within(form).getByRole("checkbox", { name: /coach\.http\.request/ })).toBeChecked();
    expect(within(form).getByRole("checkbox", { name: /coach\.echo/ })).not.toBeChecked();
    expect(within(form).getByRole("checkbox", { name: /coach\.shell\.run/ })).toHaveAccessibleDescription("Runs a command.");
    expect(within(form).getByText("destructive")).toBeInTheDocument();
    expect(within(form).getByRole("button", { name: "Save" })).toBeDisabled(); // nothing changed yet
  });

  it("saves the admin's choice", async () => {
    const { calls, form, user } = await openTools((call) =>
      call.method === "PUT" && call.url === "/api/workspace/gateway"
        ? jsonResponse({ builtin_tools: ["echo", "http.request"],
          available: AVAILABLE.map((t) => ({ ...t, exposed: t.name !== "shell.run" })) })
        : undefined);
    await user.click(within(form).getByRole("checkbox", { name: /coach\.echo/ }));
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Saved.")).toBeInTheDocument();
    expect(calls.find((c) => c.method === "PUT")?.body).toEqual({ builtin_tools: ["echo", "http.request"] });
    expect(screen.getByRole("checkbox", { name: /coach\.echo/ })).toBeChecked();
  });

  it("says why a choice was not saved", async () => {
    const { form, user } = await openTools((call) =>
      call.method === "PUT" ? errorResponse(422, "validation_failed", "unknown built-in tool 'rm.rf'") : undefined);
    await user.click(within(form).getByRole("checkbox", { name: /coach\.shell\.run/ }));
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("unknown built-in tool 'rm.rf'");
  });

  it("is read-only for a lead", async () => {
    const lead: AuthSession = { ...testSession, workspaces: [{ ...testSession.workspaces[0], role: "lead" }] };
    const { form } = await openTools(undefined, lead);
    for (const box of within(form).getAllByRole("checkbox")) expect(box).toBeDisabled();
    expect(within(form).queryByRole("button", { name: "Save" })).toBeNull();
    expect(within(form).getByText(/Only an admin can change/)).toBeInTheDocument();
  });

  it("is not shown to an operator", async () => {
    const operator: AuthSession = { ...testSession, workspaces: [{ ...testSession.workspaces[0], role: "operator" }] };
    const { calls } = stubSignedInFetch((call) =>
      call.url === "/api/tools" ? jsonResponse({ items: [] }) : jsonResponse({}), operator);
    renderApp("/tools");
    await screen.findByRole("table", { name: "Every tool" });
    expect(screen.queryByRole("heading", { name: "Built-in tools for agents" })).toBeNull();
    expect(calls.some((c) => c.url === "/api/workspace/gateway")).toBe(false);
  });
});
