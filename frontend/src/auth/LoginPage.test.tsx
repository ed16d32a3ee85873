import { act, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { WORKSPACE_STORAGE_KEY } from "../api/client";
import { emptyPage, renderApp, stubSignedOutFetch, testSession, unauthorized } from "../test/auth";
import { errorResponse, headersOf, jsonResponse, stubFetch } from "../test/utils";

async function findLoginForm() {
  return screen.findByRole("heading", { level: 1, name: "Log in to Coach" });
}

describe("LoginPage", () => {
  it("logs in with the keyboard and opens the page the user asked for", async () => {
    const user = userEvent.setup();
    const { calls } = stubSignedOutFetch();
    renderApp("/executions");

    await findLoginForm();
    const email = screen.getByLabelText("Email");
    expect(email).toHaveFocus();
    expect(window.location.pathname).toBe("/executions");

    await user.keyboard("ada@example.com");
    await user.tab();
    expect(screen.getByLabelText("Password")).toHaveFocus();
    await user.keyboard("s3cret{Enter}");

    expect(await screen.findByRole("heading", { level: 1, name: "Executions" })).toBeInTheDocument();
    expect(window.location.pathname).toBe("/executions");
    expect(screen.getByText("ada@example.com")).toBeInTheDocument();
    expect(screen.queryByLabelText("Password")).not.toBeInTheDocument();
    // Focus moves to the page, not lost with the removed form.
    expect(screen.getByRole("main")).toHaveFocus();

    const login = calls.find((c) => c.url === "/api/auth/login")!;
    expect(login.method).toBe("POST");
    expect(login.body).toEqual({ email: "ada@example.com", password: "s3cret" });
    expect(headersOf(login)["X-Coach-Workspace"]).toBeUndefined();

    // Later requests name the session's workspace.
    expect(window.localStorage.getItem(WORKSPACE_STORAGE_KEY)).toBe("1");
    // (the heading shows before the page's first request has gone out: wait for it)
    const list = await waitFor(() => {
      const call = calls.find((c) => c.url.startsWith("/api/executions/"));
      expect(call).toBeDefined();
      return call!;
    });
    expect(headersOf(list)["X-Coach-Workspace"]).toBe("1");
  });

  it("opens the queue after login when the user asked for the home page", async () => {
    const user = userEvent.setup();
    stubSignedOutFetch();
    renderApp("/");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "s3cret");
    await user.click(screen.getByRole("button", { name: "Log in" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    expect(window.location.pathname).toBe("/queue");
  });

  it("follows a same-site ?next= from /login, and ignores another site's", async () => {
    const user = userEvent.setup();
    stubSignedOutFetch();
    const { unmount } = renderApp("/login?next=%2Fexecutions");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "s3cret{Enter}");
    expect(await screen.findByRole("heading", { level: 1, name: "Executions" })).toBeInTheDocument();
    expect(window.location.pathname).toBe("/executions");
    unmount();

    stubSignedOutFetch();
    renderApp("/login?next=%2F%2Fevil.example%2Fsteal");
    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "s3cret{Enter}");
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    expect(window.location.pathname).toBe("/queue");
  });

  it("says 'Wrong email or password' on a 401 and lets the user try again", async () => {
    const user = userEvent.setup();
    const { calls } = stubSignedOutFetch({
      login: ({ body }) =>
        (body as { password: string }).password === "right"
          ? jsonResponse(testSession)
          : errorResponse(401, "invalid_credentials", "Invalid email or password"),
    });
    let unauthorizedEvents = 0;
    const count = () => unauthorizedEvents++;
    window.addEventListener("coach:unauthorized", count);
    renderApp("/workflows");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "wrong{Enter}");

    const alert = await screen.findByRole("alert");
    await waitFor(() => expect(alert).toHaveTextContent("Wrong email or password"));
    const password = screen.getByLabelText("Password");
    expect(password).toHaveAttribute("aria-invalid", "true");
    expect(password).toHaveAccessibleDescription(/Wrong email or password/);
    expect(password).toHaveFocus();
    expect(screen.getByRole("button", { name: "Log in" })).toBeEnabled();
    // The login's own 401 is not "session gone" (the session check's 401 at start is).
    const eventsAfterStart = unauthorizedEvents;

    await user.clear(password);
    await user.type(password, "right{Enter}");
    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
    expect(calls.filter((c) => c.url === "/api/auth/login")).toHaveLength(2);
    expect(unauthorizedEvents).toBe(eventsAfterStart);
    window.removeEventListener("coach:unauthorized", count);
  });

  it("shows how long to wait after too many attempts (429 with Retry-After)", async () => {
    const user = userEvent.setup();
    stubSignedOutFetch({
      login: () => errorResponse(429, "too_many_requests", "Too many requests", undefined, { "Retry-After": "30" }),
    });
    renderApp("/");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "guess{Enter}");

    const alert = await screen.findByRole("alert");
    await waitFor(() => expect(alert).toHaveTextContent("Too many attempts, try again in 30 s"));
    expect(screen.getByLabelText("Password")).not.toHaveAttribute("aria-invalid");
  });

  it("says to try again later after a 429 without Retry-After", async () => {
    const user = userEvent.setup();
    stubSignedOutFetch({ login: () => errorResponse(429, "too_many_requests", "Too many requests") });
    renderApp("/");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "guess{Enter}");

    await waitFor(() => expect(screen.getByRole("alert")).toHaveTextContent("Too many attempts, try again later"));
  });

  it("disables the submit button while the login is pending", async () => {
    const user = userEvent.setup();
    let answer: (response: Response) => void = () => {};
    const { calls } = stubSignedOutFetch({
      login: () => new Promise<Response>((resolve) => (answer = resolve)),
    });
    renderApp("/");

    await findLoginForm();
    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "s3cret");
    await user.click(screen.getByRole("button", { name: "Log in" }));

    const button = await screen.findByRole("button", { name: "Logging in…" });
    expect(button).toBeDisabled();
    await user.keyboard("{Enter}");
    expect(calls.filter((c) => c.url === "/api/auth/login")).toHaveLength(1);

    await act(async () => answer(jsonResponse(testSession)));
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
  });

  it("brings the login page back when a page call answers 401, then returns to that page", async () => {
    const user = userEvent.setup();
    let sessionAlive = true;
    stubFetch(({ url }) => {
      if (url === "/api/auth/me") return jsonResponse(testSession);
      if (url === "/api/auth/login") {
        sessionAlive = true;
        return jsonResponse(testSession);
      }
      // the Executions page's own read gets the 401 (a late read of the Workflows page, answered before the click
      // navigated, would bring the login page back on /workflows: the test raced with it)
      return sessionAlive || !url.startsWith("/api/executions") ? jsonResponse(emptyPage) : unauthorized();
    });
    renderApp("/workflows");

    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();

    // The session expires on the server; the next page call gets a 401.
    sessionAlive = false;
    await user.click(screen.getByRole("link", { name: "Executions" }));

    await findLoginForm();
    expect(screen.queryByText("ada@example.com")).not.toBeInTheDocument();
    expect(screen.queryByRole("navigation", { name: "Main" })).not.toBeInTheDocument();
    expect(window.location.pathname).toBe("/executions");

    await user.type(screen.getByLabelText("Email"), "ada@example.com");
    await user.type(screen.getByLabelText("Password"), "s3cret{Enter}");
    expect(await screen.findByRole("heading", { level: 1, name: "Executions" })).toBeInTheDocument();
    expect(await screen.findByText(/No executions yet/)).toBeInTheDocument();
  });

  it("offers to try again when the session check fails for another reason", async () => {
    const user = userEvent.setup();
    let up = false;
    stubFetch(({ url }) => {
      if (url === "/api/auth/me") {
        return up ? jsonResponse(testSession) : errorResponse(503, "unavailable", "Coach is starting");
      }
      return jsonResponse(emptyPage);
    });
    renderApp("/");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not check whether you are logged in");
    expect(alert).toHaveTextContent("Coach is starting");
    expect(screen.queryByLabelText("Password")).not.toBeInTheDocument();

    up = true;
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
  });
});
