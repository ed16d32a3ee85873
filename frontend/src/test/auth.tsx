import { render } from "@testing-library/react";
import App from "../App";
import type { AuthSession } from "../api/types";
import { errorResponse, jsonResponse, stubFetch, testQueryClient, type RecordedCall } from "./utils";

type Handler = (call: RecordedCall) => Response | Promise<Response>;

/** A signed-in admin of "Default" (id "1") who is also an operator in "Support" (id "2"). */
export const testSession: AuthSession = {
  user: { id: "7", email: "ada@example.com", name: "Ada" },
  workspaces: [
    { id: "1", slug: "default", name: "Default", role: "admin" },
    { id: "2", slug: "support", name: "Support", role: "operator" },
  ],
  workspace_id: "1",
  csrf_token: "csrf-from-answer",
};

export const emptyPage = { items: [], total: 0, page: 1, per_page: 20 };

export const unauthorized = () => errorResponse(401, "unauthorized", "Log in first");

/**
 * Stubs `fetch` for a signed-in user: `GET /api/auth/me` answers `session`,
 * `POST /api/auth/logout` answers 204, anything else goes to `handler`
 * (default: an empty page).
 */
export function stubSignedInFetch(handler: Handler = () => jsonResponse(emptyPage), session = testSession) {
  return stubFetch((call) => {
    if (call.url === "/api/auth/me") return jsonResponse(session);
    if (call.url === "/api/auth/logout") return new Response(null, { status: 204 });
    return handler(call);
  });
}

/**
 * Stubs `fetch` for a visitor with no session: `GET /api/auth/me` answers 401
 * until a login succeeds, then `session`. `login` answers the login call
 * (default: success with `session`); anything else goes to `handler`, or 401
 * while logged out.
 */
export function stubSignedOutFetch({
  login = () => jsonResponse(session),
  handler = () => jsonResponse(emptyPage),
  session = testSession,
}: { login?: Handler; handler?: Handler; session?: AuthSession } = {}) {
  let signedIn = false;
  return stubFetch(async (call) => {
    if (call.url === "/api/auth/me") return signedIn ? jsonResponse(session) : unauthorized();
    if (call.url === "/api/auth/login") {
      const response = await login(call);
      if (response.ok) signedIn = true;
      return response;
    }
    return signedIn ? handler(call) : unauthorized();
  });
}

/** Renders the whole app (router, auth, pages) at `route`. */
export function renderApp(route = "/") {
  window.history.replaceState(null, "", route);
  const queryClient = testQueryClient();
  const utils = render(<App queryClient={queryClient} />);
  return { ...utils, queryClient };
}

/** Sets a readable cookie, as the server's Set-Cookie would. */
export function setCookie(name: string, value: string) {
  document.cookie = `${name}=${encodeURIComponent(value)}; path=/`;
}
