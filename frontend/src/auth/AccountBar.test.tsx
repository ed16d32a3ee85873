import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { WORKSPACE_STORAGE_KEY } from "../api/client";
import { emptyPage, renderApp, setCookie, stubSignedInFetch, testSession } from "../test/auth";
import { errorResponse, headersOf, jsonResponse, type RecordedCall, stubFetch } from "../test/utils";

function header() {
  return screen.getByRole("banner");
}

describe("AccountBar", () => {
  it("shows the user's email, a labelled workspace switcher with roles, and Log out", async () => {
    stubSignedInFetch();
    renderApp("/workflows");

    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    const banner = header();
    expect(within(banner).getByText("ada@example.com")).toBeInTheDocument();
    const select = within(banner).getByRole("combobox", { name: "Workspace" });
    expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "Default (admin)",
      "Support (operator)",
    ]);
    expect(select).toHaveValue("1");
    expect(within(banner).getByRole("button", { name: "Log out" })).toBeInTheDocument();
  });

  it("sends the new X-Coach-Workspace on the next request after switching", async () => {
    const user = userEvent.setup();
    const { calls } = stubSignedInFetch();
    renderApp("/workflows");

    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    const before = calls.filter((c) => c.url === "/api/workflows");
    expect(before).toHaveLength(1);
    expect(headersOf(before[0])["X-Coach-Workspace"]).toBe("1");

    await user.selectOptions(screen.getByRole("combobox", { name: "Workspace" }), "Support (operator)");

    // The switch refetches what is on screen, for the new workspace.
    await waitFor(() => expect(calls.filter((c) => c.url === "/api/workflows")).toHaveLength(2));
    const after = calls.filter((c) => c.url === "/api/workflows")[1];
    expect(headersOf(after)["X-Coach-Workspace"]).toBe("2");
    expect(window.localStorage.getItem(WORKSPACE_STORAGE_KEY)).toBe("2");
    expect(screen.getByRole("combobox", { name: "Workspace" })).toHaveValue("2");

    // And so does the next page.
    await user.click(screen.getByRole("link", { name: "Executions" }));
    await screen.findByRole("heading", { level: 1, name: "Executions" });
    // the page's heading may be drawn before its read goes out (a busy machine): wait for the read itself
    expect(headersOf(await readOf(calls, "/api/executions/"))["X-Coach-Workspace"]).toBe("2");
  });

  it("keeps a stored workspace the user still belongs to, and replaces one they do not", async () => {
    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "2");
    const first = stubSignedInFetch();
    const { unmount } = renderApp("/workflows");
    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    expect(screen.getByRole("combobox", { name: "Workspace" })).toHaveValue("2");
    // The session check itself never names a workspace: a stale one would make it 404.
    expect(headersOf(first.calls[0])["X-Coach-Workspace"]).toBeUndefined();
    // the page's heading may be drawn before its read goes out (a busy machine): wait for the read itself
    expect(headersOf(await readOf(first.calls, "/api/workflows"))["X-Coach-Workspace"]).toBe("2");
    unmount();

    window.localStorage.setItem(WORKSPACE_STORAGE_KEY, "99");
    const second = stubSignedInFetch();
    renderApp("/workflows");
    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    expect(screen.getByRole("combobox", { name: "Workspace" })).toHaveValue("1");
    expect(window.localStorage.getItem(WORKSPACE_STORAGE_KEY)).toBe("1");
    expect(headersOf(await readOf(second.calls, "/api/workflows"))["X-Coach-Workspace"]).toBe("1");
  });

  it("logs out with the CSRF token and shows the login page", async () => {
    const user = userEvent.setup();
    setCookie("coach_csrf", "tok-123");
    const { calls } = stubSignedInFetch();
    renderApp("/executions");

    await screen.findByRole("heading", { level: 1, name: "Executions" });
    await user.click(screen.getByRole("button", { name: "Log out" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Log in to Coach" })).toBeInTheDocument();
    const logout = calls.find((c) => c.url === "/api/auth/logout")!;
    expect(logout.method).toBe("POST");
    expect(headersOf(logout)["X-CSRF-Token"]).toBe("tok-123");
    expect(window.location.pathname).toBe("/");
    expect(screen.queryByText("ada@example.com")).not.toBeInTheDocument();
  });

  it("stays logged in and says why when logging out fails", async () => {
    const user = userEvent.setup();
    stubFetch(({ url }) => {
      if (url === "/api/auth/me") return jsonResponse(testSession);
      if (url === "/api/auth/logout") return errorResponse(500, "internal", "Database unavailable");
      return jsonResponse(emptyPage);
    });
    renderApp("/workflows");
    await screen.findByRole("heading", { level: 1, name: "Workflows" });

    await user.click(screen.getByRole("button", { name: "Log out" }));

    const alert = await within(header()).findByRole("alert");
    expect(alert).toHaveTextContent("Could not log out: Database unavailable");
    expect(screen.getByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
    expect(within(header()).getByRole("button", { name: "Log out" })).toBeEnabled();
  });
});

/** The call to `url` once it has gone out (the page's heading may be drawn before its read does). */
function readOf(calls: RecordedCall[], url: string): Promise<RecordedCall> {
  return waitFor(() => {
    const found = calls.find((c) => c.url === url);
    expect(found).toBeDefined();
    return found!;
  });
}
