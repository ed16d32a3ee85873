import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import {
  ApiError,
  LOGIN_PATH,
  UNAUTHORIZED_EVENT,
  getSelectedWorkspace,
  setCsrfToken,
  setSelectedWorkspace,
} from "../api/client";
import type { AuthSession, LoginRequest, WorkspaceMembership } from "../api/types";
import { ME_PATH } from "../earlyReads";
import { api, omitWorkspace, unwrap } from "../api/typed";
import { AuthContext, type AuthContextValue } from "./context";

export { ME_PATH };
export const LOGOUT_PATH = "/api/auth/logout";

type State =
  | { status: "loading" }
  | { status: "anonymous" }
  | { status: "error"; error: unknown }
  | { status: "authenticated"; session: AuthSession; workspaceId: string | null; via: "login" | "session" };

function findWorkspace(workspaces: WorkspaceMembership[], key: string | null): WorkspaceMembership | undefined {
  if (!key) return undefined;
  return workspaces.find((w) => String(w.id) === key) ?? workspaces.find((w) => w.slug === key);
}

/**
 * The workspace to use after login or the session check: the stored choice
 * when the user is still a member there, else the session's own, else the
 * first. Stored, so every request names it.
 */
function settleWorkspace(session: AuthSession): string | null {
  const chosen =
    findWorkspace(session.workspaces, getSelectedWorkspace()) ??
    findWorkspace(session.workspaces, session.workspace_id == null ? null : String(session.workspace_id)) ??
    session.workspaces[0];
  const id = chosen ? String(chosen.id) : null;
  setSelectedWorkspace(id);
  return id;
}

// The session check a page load started before the first render (startSessionCheck), for the first check to use.
let started: Promise<AuthSession> | null = null;

/** How long a signed-in answer waits for `alongWith` (the page's chunk) at most. */
export const SESSION_WAITS_FOR_PAGE_MS = 1_000;

/**
 * Starts the session check at once (main.tsx, before React renders), so that it runs while the page's chunk and
 * first render are under way; the provider's first check takes its answer instead of asking again. A signed-in
 * answer is handed over once `alongWith` (the page's chunk) has settled too, for up to a second: the signed-in
 * app then draws its page at once, where it drew the frame and a "Loading page…" fallback first, and React held
 * the page back behind that fallback for a while. A refusal (the login page) is handed over at once.
 */
export function startSessionCheck(alongWith?: Promise<unknown>): Promise<AuthSession> {
  started ??= unwrap(api.GET(ME_PATH, { ...omitWorkspace })).then(async (session) => {
    if (alongWith) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const enough = new Promise<void>((resolve) => (timer = setTimeout(resolve, SESSION_WAITS_FOR_PAGE_MS)));
      await Promise.race([alongWith.catch(() => undefined), enough]);
      clearTimeout(timer);
    }
    return session;
  });
  started.catch(() => undefined); // the provider handles the failure
  return started;
}

/**
 * Knows who is signed in. Checks `GET /api/auth/me` on start (401 → logged
 * out), logs in and out, switches workspace, and drops to "logged out" when
 * any API call answers 401 (`coach:unauthorized`).
 */
export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<State>({ status: "loading" });
  const [check, setCheck] = useState(0);

  const signIn = useCallback((session: AuthSession, via: "login" | "session") => {
    setCsrfToken(session.csrf_token);
    const workspaceId = settleWorkspace(session);
    setState({ status: "authenticated", session, workspaceId, via });
  }, []);

  // The session check: once on start, again on recheck().
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => (s.status === "loading" ? s : { status: "loading" }));
    const request = started ?? unwrap(api.GET(ME_PATH, { ...omitWorkspace, signal: controller.signal }));
    started = null; // taken: a recheck asks again
    request.then(
      (session) => {
        if (!controller.signal.aborted) signIn(session, "session");
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (error instanceof ApiError && error.status === 401) setState({ status: "anonymous" });
        else setState({ status: "error", error });
      },
    );
    return () => controller.abort();
  }, [check, signIn]);

  // Any 401 from the API: the session is gone.
  useEffect(() => {
    const onUnauthorized = () => {
      setCsrfToken(null);
      setState((s) => (s.status === "anonymous" ? s : { status: "anonymous" }));
    };
    window.addEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
  }, []);

  // Nothing of a past session stays in the cache once logged out.
  useEffect(() => {
    if (state.status === "anonymous") queryClient.clear();
  }, [state.status, queryClient]);

  const login = useCallback(
    async (email: string, password: string) => {
      const session = await unwrap(api.POST(LOGIN_PATH, { ...omitWorkspace, body: { email, password } satisfies LoginRequest }));
      signIn(session, "login");
    },
    [signIn],
  );

  const logout = useCallback(async () => {
    try {
      await unwrap(api.POST(LOGOUT_PATH));
    } catch (error) {
      // 401: already logged out on the server, which is what we wanted.
      if (!(error instanceof ApiError && error.status === 401)) throw error;
    }
    setCsrfToken(null);
    setState({ status: "anonymous" });
  }, []);

  const switchWorkspace = useCallback(
    (id: string) => {
      setSelectedWorkspace(id);
      setState((s) => (s.status === "authenticated" ? { ...s, workspaceId: id } : s));
      // Every cached answer belongs to the old workspace: fetch again.
      void queryClient.invalidateQueries();
    },
    [queryClient],
  );

  const recheck = useCallback(() => setCheck((n) => n + 1), []);

  const value = useMemo<AuthContextValue>(() => {
    const session = state.status === "authenticated" ? state.session : null;
    const workspace =
      state.status === "authenticated" ? (findWorkspace(state.session.workspaces, state.workspaceId) ?? null) : null;
    return {
      status: state.status,
      user: session?.user ?? null,
      workspaces: session?.workspaces ?? [],
      disabledWorkspaces: session?.disabled_workspaces ?? [],
      workspace,
      role: workspace?.role ?? null,
      signedInVia: state.status === "authenticated" ? state.via : null,
      error: state.status === "error" ? state.error : null,
      login,
      logout,
      switchWorkspace,
      recheck,
    };
  }, [state, login, logout, switchWorkspace, recheck]);

  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
