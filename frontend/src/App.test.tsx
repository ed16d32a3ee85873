import { act, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { emptyPage, renderApp, stubSignedInFetch, testSession } from "./test/auth";
import { jsonResponse } from "./test/utils";
import { lastSocket } from "./test/fakeSocket";
import userEvent from "@testing-library/user-event";

describe("App", () => {
  it("shows the Coach header and navigation, and opens the operator's queue by default", async () => {
    stubSignedInFetch();
    renderApp("/");

    // The session check runs first; then the signed-in frame appears.
    expect(await screen.findByRole("link", { name: "Coach" })).toBeInTheDocument();
    const nav = screen.getByRole("navigation", { name: "Main" });
    expect(within(nav).getByRole("link", { name: "Workflows" })).toHaveAttribute("href", "/workflows");
    expect(within(nav).getByRole("link", { name: "Executions" })).toHaveAttribute("href", "/executions");
    expect(within(nav).getByRole("link", { name: "Queue" })).toHaveAttribute("href", "/queue");
    expect(within(nav).getByRole("link", { name: "Dashboard" })).toHaveAttribute("href", "/dashboard");
    expect(within(nav).getByRole("link", { name: "Correction packs" })).toHaveAttribute("href", "/correction-packs");
    expect(within(nav).getByRole("link", { name: "Audit log" })).toHaveAttribute("href", "/audit");
    expect(within(nav).getByRole("link", { name: "API docs" })).toHaveAttribute("href", "/api/docs");

    // The page itself is a lazily loaded chunk.
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    expect(within(nav).getByRole("link", { name: "Queue" })).toHaveAttribute("aria-current", "page");
    expect(window.location.pathname).toBe("/queue");
  });

  it("tells a user disabled in their only workspace whom to ask, with no offline banner and no socket", async () => {
    stubSignedInFetch(() => jsonResponse({ items: [] }), {
      ...testSession,
      workspaces: [],
      workspace_id: null,
      disabled_workspaces: [{ id: "3", slug: "home", name: "Home team" }],
    });
    renderApp("/queue");
    expect(await screen.findByRole("heading", { level: 1, name: "You are not a member of any workspace" }))
      .toBeInTheDocument();
    expect(screen.getByText(/An admin disabled your access to/)).toHaveTextContent(
      "An admin disabled your access to Home team. Ask an admin of that workspace to enable you again",
    );
    expect(screen.queryByText(/Offline/)).not.toBeInTheDocument();
    expect(() => lastSocket()).toThrow("the app opened no socket");
    expect(screen.getByRole("button", { name: "Log out" })).toBeInTheDocument();
  });

  it("shows the disabled notice at once when the server says an admin disabled this person", async () => {
    let session = testSession;
    stubSignedInFetch(() => jsonResponse(emptyPage));
    const fetchStub = globalThis.fetch;
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      String(input) === "/api/auth/me" ? Promise.resolve(jsonResponse(session)) : fetchStub(input, init)) as typeof fetch;
    renderApp("/queue");
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    const socket = await waitFor(() => lastSocket());
    session = { ...testSession, workspaces: [], workspace_id: null,
      disabled_workspaces: [{ id: "1", slug: "default", name: "Default workspace" }] };
    act(() => socket.push("access_ended", { reason: "disabled", workspace_id: "1" }));
    expect(await screen.findByRole("heading", { level: 1, name: "You are not a member of any workspace" }))
      .toBeInTheDocument();
    expect(screen.getByText(/An admin disabled your access to/)).toHaveTextContent("Default workspace");
    expect(screen.queryByText(/reconnecting/)).not.toBeInTheDocument();
  });

  it("tells an invited user with no workspace to accept the invitation", async () => {
    const invitation = {
      id: "inv1", workspace: { id: "3", slug: "home", name: "Home team" }, role: "operator",
      invited_by: "boss@example.com", status: "pending", created_at: "2026-01-01T00:00:00Z",
    };
    stubSignedInFetch(
      (call) => jsonResponse(call.url === "/api/auth/invitations" ? { items: [invitation] } : { items: [] }),
      { ...testSession, workspaces: [], workspace_id: null, disabled_workspaces: [] },
    );
    renderApp("/queue");
    expect(await screen.findByText("Accept an invitation below to join its workspace.")).toBeInTheDocument();
    const banner = screen.getByRole("region", { name: "Invitations" });
    expect(within(banner).getByRole("button", { name: "Accept" })).toBeInTheDocument();
    expect(screen.queryByText(/Ask an admin/)).not.toBeInTheDocument();
    expect(screen.queryByText(/Offline/)).not.toBeInTheDocument();
  });

  it("says it is checking the session before showing anything", async () => {
    stubSignedInFetch();
    renderApp("/");
    expect(screen.getByRole("status")).toHaveTextContent("Checking your session…");
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
  });

  it("says when the live connection is down and clears it when it is back", async () => {
    stubSignedInFetch();
    renderApp("/workflows");
    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
    const socket = await waitFor(() => lastSocket()); // it opens once the app knows who the user is
    expect(socket.workspace).toBe("1");
    await waitFor(() => expect(screen.queryByText(/live updates/i)).not.toBeInTheDocument());
    act(() => socket.drop());
    expect(screen.getByRole("status")).toHaveTextContent("Offline — live updates paused, reconnecting…");
    act(() => socket.connect());
    expect(screen.queryByText(/Offline/)).not.toBeInTheDocument();
  });

  it("counts the coaching panel as queue work in the navigation", async () => {
    // no such execution: the panel says so (an empty list is no execution, and would be read as one)
    stubSignedInFetch((call) =>
      call.url.startsWith("/api/executions/")
        ? jsonResponse({ error: { code: "not_found", message: "execution abc not found", details: {} } }, 404)
        : jsonResponse(emptyPage),
    );
    renderApp("/executions/abc/coach");
    const nav = await screen.findByRole("navigation", { name: "Main" });
    expect(within(nav).getByRole("link", { name: "Queue" })).toHaveAttribute("aria-current", "page");
    expect(within(nav).getByRole("link", { name: "Executions" })).not.toHaveAttribute("aria-current", "page");
    expect(await screen.findByText("Could not load this coaching session")).toBeInTheDocument();
  });

  it("opens the live connection again for the workspace picked in the header", async () => {
    const user = userEvent.setup();
    stubSignedInFetch();
    renderApp("/workflows");
    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    // the page may render before the live connection opens (it waits for who the user is): wait for it too
    const first = await waitFor(() => lastSocket());
    expect(first.workspace).toBe("1");

    await user.selectOptions(screen.getByRole("combobox", { name: "Workspace" }), "Support (operator)");
    await waitFor(() => expect(lastSocket().workspace).toBe("2"));
    expect(first.connected).toBe(false);
    await waitFor(() => expect(lastSocket().connected).toBe(true));
  });
});
