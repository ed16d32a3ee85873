/**
 * The web app's one request path to the Coach API, `send`, under the typed client of ./typed.ts (every call
 * goes through `api` there), with the errors, the session's CSRF token and the selected workspace.
 *
 * Every request is same-origin (cookies included). A
 * non-2xx answer becomes an `ApiError` built from the server's error
 * envelope `{"error": {"code", "message", "details"}}`; a request that
 * never got an answer becomes an `ApiError` with status 0.
 *
 * Authentication (docs/auth.md): the session cookie rides along on its own;
 * writes (POST/PUT/PATCH/DELETE) also send `X-CSRF-Token` copied from the
 * readable `coach_csrf` cookie, and every call sends `X-Coach-Workspace` with
 * the workspace picked in the header (kept in localStorage). A 401 from any
 * call but the login itself fires the window event `coach:unauthorized`.
 */

/** Window event fired when the server says the session is gone (401). */
export const UNAUTHORIZED_EVENT = "coach:unauthorized";

/** The largest request body the server takes by default (COACH_MAX_BODY_MB, 10 MiB); it answers 413 above. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The size in bytes of `value` sent as JSON (UTF-8). */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? "").length;
}

/** "10.5 MB" (MiB, one decimal). */
export function formatMegabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Path of the login call: its 401 means "wrong password", not "logged out". */
export const LOGIN_PATH = "/api/auth/login";

import { CSRF_COOKIE, WORKSPACE_HEADER, WORKSPACE_STORAGE_KEY, getSelectedWorkspace, readCookie, takeEarlyRead } from "../earlyReads";

// The CSRF cookie, the workspace header and its localStorage key, and reading them: also what the page load's early
// reads use (earlyReads.ts, which imports nothing).
export { CSRF_COOKIE, WORKSPACE_HEADER, WORKSPACE_STORAGE_KEY, getSelectedWorkspace, readCookie } from "../earlyReads";
export const CSRF_HEADER = "X-CSRF-Token";

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

// The token from the last login or /api/auth/me answer; used only when the
// cookie cannot be read (the cookie is what the server compares against).
let rememberedCsrfToken: string | null = null;

/** Remembers the `csrf_token` of a login or /api/auth/me answer (null forgets it). */
export function setCsrfToken(token: string | null | undefined): void {
  rememberedCsrfToken = token || null;
}

/** The CSRF token to send on writes: the `coach_csrf` cookie, else the remembered one. */
export function csrfToken(): string | null {
  return readCookie(CSRF_COOKIE) ?? rememberedCsrfToken;
}

/** Stores (or, with null, forgets) the picked workspace id. */
export function setSelectedWorkspace(id: string | null): void {
  try {
    if (id) window.localStorage.setItem(WORKSPACE_STORAGE_KEY, id);
    else window.localStorage.removeItem(WORKSPACE_STORAGE_KEY);
  } catch {
    // Storage disabled: the choice lasts until the page reloads at most.
  }
}

export class ApiError extends Error {
  /** HTTP status, or 0 when no response arrived (network failure). */
  readonly status: number;
  /** Machine-readable error code from the server, or a derived one. */
  readonly code: string;
  /** Extra detail from the server (validation errors etc.), if any. */
  readonly details: unknown;
  /** Seconds to wait before trying again (from `Retry-After`), when the server says. */
  readonly retryAfter: number | undefined;
  /** For a definition sent as text: the line where each field of `details` is written (`error.lines`). */
  readonly lines: Record<string, number> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: unknown,
    retryAfter?: number,
    lines?: Record<string, number>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
    this.lines = lines;
  }
}

/**
 * Seconds from a `Retry-After` value: a number of seconds or an HTTP date.
 * Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds an ApiError from a failed response, whatever its body holds. */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  const fallbackMessage = response.statusText
    ? `Request failed: ${response.status} ${response.statusText}`
    : `Request failed with status ${response.status}`;
  const fallbackCode = `http_${response.status}`;
  const retryAfter = parseRetryAfter(response.headers.get("Retry-After"));

  let text = "";
  try {
    text = await response.text();
  } catch {
    // Body unreadable: fall through to the generic error.
  }

  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }

  if (isRecord(parsed) && isRecord(parsed.error)) {
    const { code, message, details, lines } = parsed.error;
    // Without the header, the server's details may still say how long to wait.
    const detailWait = isRecord(details) ? details.retry_after_s : undefined;
    return new ApiError(
      response.status,
      typeof code === "string" && code ? code : fallbackCode,
      typeof message === "string" && message ? message : fallbackMessage,
      details,
      retryAfter ?? (typeof detailWait === "number" && detailWait >= 0 ? Math.ceil(detailWait) : undefined),
      isRecord(lines) ? (lines as Record<string, number>) : undefined,
    );
  }
  return new ApiError(response.status, fallbackCode, fallbackMessage, undefined, retryAfter);
}

/** The path part of a URL or path, without query or fragment. */
function pathOf(url: string): string {
  try {
    return new URL(url, "http://coach.invalid").pathname;
  } catch {
    return url;
  }
}

/** What `send` needs besides the path: the method, the caller's own headers, a body already made into text. */
export interface SendInit {
  method: string;
  /** The caller's own headers (`Content-Type` of the body, `Idempotency-Key`…): they win over the defaults. */
  headers?: Record<string, string>;
  /** The body as sent (JSON or YAML text); none for a read. */
  body?: string;
  signal?: AbortSignal | null;
  /** Leave out `X-Coach-Workspace` even when a workspace is selected (the session check, invitations). */
  omitWorkspace?: boolean;
}

/**
 * The one way a request leaves the web app: `request` below and the typed client's fetch (./typed.ts) both call it.
 * It sends `Accept: application/json`, `X-CSRF-Token` on writes, `X-Coach-Workspace` with the picked workspace
 * (unless `omitWorkspace`) and the caller's headers, same-origin with cookies; a read without headers of its own
 * takes the page load's early read of the same path (earlyReads.ts) when one is waiting. It resolves to a 2xx
 * answer only: no answer at all is `ApiError` status 0, a non-2xx answer the `ApiError` of its error envelope (a
 * 401 but the login's also fires `coach:unauthorized`).
 */
export async function send(path: string, { method, headers: own, body, signal, omitWorkspace }: SendInit): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (WRITE_METHODS.has(method)) {
    const token = csrfToken();
    if (token) headers[CSRF_HEADER] = token;
  }
  const workspace = omitWorkspace ? null : getSelectedWorkspace();
  if (workspace) headers[WORKSPACE_HEADER] = workspace;
  Object.assign(headers, own);
  const init: RequestInit = { method, headers, credentials: "same-origin", signal: signal ?? undefined };
  if (body !== undefined) init.body = body;

  // the page load's early read of this very request (earlyReads.ts), if one is waiting
  const early = method === "GET" && body === undefined && !own ? takeEarlyRead(path, workspace) : null;
  let response: Response;
  try {
    response = await (early ?? fetch(path, init));
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Could not reach the Coach server. Check your connection and try again.", {
      cause: err instanceof Error ? err.message : String(err),
    });
  }

  if (!response.ok) {
    const error = await errorFromResponse(response);
    if (response.status === 401 && pathOf(path) !== LOGIN_PATH) {
      window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT, { detail: { method, path } }));
    }
    throw error;
  }
  return response;
}

/** The ApiError of a 2xx answer whose body is not the JSON it should be. */
export function invalidJson(status: number): ApiError {
  return new ApiError(status, "invalid_json", "The server sent a response that is not valid JSON.");
}

/** A user-facing sentence for any error a query or mutation may throw. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error && err.message) return err.message;
  return "Something went wrong.";
}
