/**
 * A page load's first reads, and its page's files, started while the app's own code is still being fetched and
 * parsed.
 *
 * This module is built as an entry of its own (vite.config.ts), under 2 KB, that index.html loads ahead of the app:
 * parsing and running the app's entry chunk (340 KB) takes 60–120 ms, and the reads and the page's chunk used to
 * start only after it (preload.ts). The app's requests take these answers (`takeEarlyRead`, in api/client.ts)
 * instead of asking again, and its import of the page finds the files fetched. It imports nothing, so that it stays
 * that small; the names it shares with api/client.ts are defined here.
 */

/** Readable cookie holding the CSRF token the server expects on writes: set while a session lives. */
export const CSRF_COOKIE = "coach_csrf";
export const WORKSPACE_HEADER = "X-Coach-Workspace";
/** localStorage key of the selected workspace id. */
export const WORKSPACE_STORAGE_KEY = "coach.workspace";
/** The session check's path (asked without a workspace). */
export const ME_PATH = "/api/auth/me";
/** An early answer not taken by then is not used: a later read asks the server (the queries' staleTime too). */
export const EARLY_READ_MAX_AGE_MS = 5_000;

/**
 * The reads the page at `pathname` + `search` makes when it mounts (the same that preload.ts starts as queries:
 * preload.test.tsx checks that they agree), or none. Only the unfiltered queue ("/" leads there) and the coaching
 * panel: the pages an operator lands on.
 */
export function firstReadPaths(pathname: string, search: string): string[] {
  if ((pathname === "/" || pathname === "/queue") && !search) {
    return ["/api/coaching/queue?page=1&per_page=50", "/api/coaching/questions?per_page=50",
      "/api/approvals?status=pending&per_page=100", "/api/workflows?per_page=200"];
  }
  const coach = /^\/executions\/([^/]+)\/coach$/.exec(pathname);
  if (!coach) return [];
  const path = `/api/executions/${encodeURIComponent(coach[1])}`; // the id as the router gives it: not decoded
  return [path, `${path}/coaching/suggestion`, `${path}/coaching/stats`];
}

type Early = { workspace: string | null; response: Promise<Response>; at: number };
const started = new Map<string, Early>();
let once = false;

/** The value of cookie `name`, or null when it is not set. */
export function readCookie(name: string): string | null {
  if (typeof document === "undefined" || !document.cookie) return null;
  for (const part of document.cookie.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}

/** The workspace id the user picked, or null. */
export function getSelectedWorkspace(): string | null {
  try {
    return window.localStorage.getItem(WORKSPACE_STORAGE_KEY) || null;
  } catch {
    return null; // Storage disabled: behave as if nothing was picked.
  }
}

function read(path: string, workspace: string | null): void {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (workspace) headers[WORKSPACE_HEADER] = workspace;
  const response = fetch(path, { headers, credentials: "same-origin" });
  response.catch(() => undefined); // whoever takes it sees the failure
  started.set(path, { workspace, response, at: performance.now() });
}

/** The id of the data block index.html carries (vite.config.ts): the files of each landing page's chunk. */
export const PAGE_FILES_ID = "coach-page-files";

/**
 * The files of the page at `pathname` + `search` (its chunk and what it imports), fetched and parsed at once as
 * module preloads, not run: the app imports the page once it runs (preload.ts), and finds them ready.
 */
function preloadPage(pathname: string, search: string): void {
  if (firstReadPaths(pathname, search).length === 0) return; // the pages an operator lands on only
  let files: Record<string, string[]>;
  try {
    files = JSON.parse(document.getElementById(PAGE_FILES_ID)?.textContent || "{}");
  } catch {
    return;
  }
  for (const file of files[pathname.endsWith("/coach") ? "coach" : "queue"] ?? []) {
    const link = document.createElement("link");
    link.rel = file.endsWith(".css") ? "stylesheet" : "modulepreload";
    link.crossOrigin = "";
    link.href = file;
    document.head.appendChild(link);
  }
}

/**
 * Starts the session check and, for a returning user (the CSRF cookie is set while a session lives) in the
 * workspace picked last time, the first reads of the page at `location`.
 */
export function startEarlyReads(location: { pathname: string; search: string }): void {
  if (once) return;
  once = true;
  read(ME_PATH, null);
  const workspace = getSelectedWorkspace();
  if (!workspace || !readCookie(CSRF_COOKIE)) return;
  for (const path of firstReadPaths(location.pathname, location.search)) read(path, workspace);
  preloadPage(location.pathname, location.search);
}

/**
 * The answer of an early read of `path` made with `workspace` (the X-Coach-Workspace sent, or null), once: the
 * first request for it takes it. Null when there is none, or it is older than EARLY_READ_MAX_AGE_MS.
 */
export function takeEarlyRead(path: string, workspace: string | null): Promise<Response> | null {
  const early = started.get(path);
  if (!early) return null;
  started.delete(path);
  if (early.workspace !== workspace || performance.now() - early.at > EARLY_READ_MAX_AGE_MS) return null;
  return early.response;
}

/** Forgets every early read, and lets a page load start them again (tests). */
export function forgetEarlyReads(): void {
  started.clear();
  once = false;
}

// Run as the entry index.html loads first (a built app only: in tests and the dev server the app reads as before).
if (import.meta.env.PROD && typeof window !== "undefined") startEarlyReads(window.location);
