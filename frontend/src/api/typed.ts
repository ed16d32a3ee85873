/**
 * The typed client: openapi-fetch over the generated `paths` (./schema.d.ts), so a path, a query, a body or a
 * response field the OpenAPI document does not allow fails `tsc`. Its `fetch` is ours: it sends the same headers as
 * `request` in ./client.ts (CSRF on writes, `X-Coach-Workspace`), takes the page load's early reads, turns a missing
 * answer into `ApiError` status 0 and a non-2xx answer into `ApiError` from the error envelope (401 → the
 * `coach:unauthorized` event, except for the login). `unwrap` turns openapi-fetch's `{data, error}` into data.
 */
import createClient from "openapi-fetch";
import type { paths } from "./schema";
import {
  ApiError,
  CSRF_HEADER,
  LOGIN_PATH,
  UNAUTHORIZED_EVENT,
  WORKSPACE_HEADER,
  csrfToken,
  errorFromResponse,
  getSelectedWorkspace,
} from "./client";
import { takeEarlyRead } from "../earlyReads";

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

async function coachFetch(input: Request): Promise<Response> {
  const request = input;
  const url = new URL(request.url, window.location.origin);
  const path = url.pathname + url.search;
  if (WRITE_METHODS.has(request.method)) {
    const token = csrfToken();
    if (token && !request.headers.has(CSRF_HEADER)) request.headers.set(CSRF_HEADER, token);
  }
  const workspace = getSelectedWorkspace();
  if (workspace && !request.headers.has(WORKSPACE_HEADER)) request.headers.set(WORKSPACE_HEADER, workspace);
  if (!request.headers.has("Accept")) request.headers.set("Accept", "application/json");
  const early = request.method === "GET" ? takeEarlyRead(path, workspace) : null;
  let response: Response;
  try {
    // the same call shape as `request` in ./client.ts: a same-origin path and plain init
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.text();
    response = await (early ?? fetch(path, {
      method: request.method,
      headers: Object.fromEntries(request.headers.entries()),
      credentials: "same-origin",
      signal: request.signal,
      body: body || undefined,
    }));
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Could not reach the Coach server. Check your connection and try again.", {
      cause: err instanceof Error ? err.message : String(err),
    });
  }
  if (!response.ok) {
    const error = await errorFromResponse(response);
    if (response.status === 401 && url.pathname !== LOGIN_PATH) {
      window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT, { detail: { method: request.method, path } }));
    }
    throw error;
  }
  return response;
}

/** The Coach API, typed by the OpenAPI document: `api.GET("/api/workflows/{workflow_id}", {params: {path: {workflow_id}}})`. */
export const api = createClient<paths>({
  baseUrl: typeof window === "undefined" ? "" : window.location.origin,
  credentials: "same-origin",
  fetch: (input: Request) => coachFetch(input),
});

/** The data of a 2xx answer (a non-2xx answer already threw `ApiError` in `coachFetch`). */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (error !== undefined) throw await errorFromResponse(response);
  return data as D;
}
