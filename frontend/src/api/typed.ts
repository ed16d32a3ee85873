/**
 * The typed client: openapi-fetch over the generated `paths` (./schema.d.ts), so a path, a query, a body or a
 * response field the OpenAPI document does not allow fails `tsc`. Its `fetch` hands each request to `send` in
 * ./client.ts, the one request path of the web app (CSRF on writes, `X-Coach-Workspace`, the page load's early reads,
 * `ApiError` status 0 for no answer and from the error envelope for a non-2xx one, the `coach:unauthorized` event).
 * `unwrap` turns openapi-fetch's `{data, error}` into data; `omitWorkspace` and `textBody` are options of a call.
 */
import createClient from "openapi-fetch";
import type { paths } from "./schema";
import { CSRF_HEADER, WORKSPACE_HEADER, errorFromResponse, invalidJson, send } from "./client";

// A Request's header names are lower case; `send` and what reads its headers use the usual spelling.
const HEADER_NAMES: Record<string, string> = {
  "x-csrf-token": CSRF_HEADER,
  "x-coach-workspace": WORKSPACE_HEADER,
};

function headerName(name: string): string {
  return HEADER_NAMES[name] ?? name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** The request openapi-fetch built, sent by `send`: same-origin path, its headers, its body as text. */
async function coachFetch(request: Request, omitWorkspace = false): Promise<Response> {
  const url = new URL(request.url, window.location.origin);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[headerName(name)] = value;
  });
  const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
  return send(url.pathname + url.search, {
    method: request.method,
    headers: Object.keys(headers).length ? headers : undefined,
    body: body || undefined,
    signal: request.signal,
    omitWorkspace,
  });
}

/**
 * The Coach API, typed by the OpenAPI document: `api.GET("/api/workflows/{workflow_id}", {params: {path: {workflow_id}}})`.
 * An answer is read as JSON (`send` asks for it), so its type is the document's `application/json` content: a route
 * that can also answer in another type (`GET /api/audit?format=jsonl`) is typed by its JSON answer.
 */
export const api = createClient<paths, "application/json">({
  baseUrl: typeof window === "undefined" ? "" : window.location.origin,
  credentials: "same-origin",
  fetch: (input: Request) => coachFetch(input),
});

/**
 * Spread into a call's options to leave out `X-Coach-Workspace` whatever workspace is picked: the session check and
 * the invitations, which must work whatever was stored (`api.GET("/api/auth/me", {...omitWorkspace, signal})`).
 */
export const omitWorkspace = { fetch: (input: Request) => coachFetch(input, true) } as const;

/**
 * Spread into a call's options to send `text` as is with its own Content-Type instead of a JSON body (a definition
 * as YAML: `api.POST("/api/plans", textBody(yaml, "application/yaml"))`); the document names the text types a route
 * takes, so the call type-checks only where text is allowed.
 */
export function textBody<T extends string>(text: T, contentType: string) {
  return { body: text, bodySerializer: (body: unknown) => body, headers: { "Content-Type": contentType } };
}

/**
 * The data of a 2xx answer (a non-2xx answer already threw `ApiError` in `send`); a 2xx body that is not JSON is
 * `ApiError` "invalid_json", as from the untyped calls.
 */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  let answer: { data?: D; error?: unknown; response: Response };
  try {
    answer = await call;
  } catch (err) {
    if (err instanceof SyntaxError) throw invalidJson(200);
    throw err;
  }
  const { data, error, response } = answer;
  if (error !== undefined) throw await errorFromResponse(response);
  // openapi-fetch types a 2xx answer's data as D; it is undefined only for a 204 or an empty body
  return data as D;
}
