/**
 * A small typed fetch client for the Coach API.
 *
 * Every request is same-origin (cookies included), JSON in and out. A
 * non-2xx answer becomes an `ApiError` built from the server's error
 * envelope `{"error": {"code", "message", "details"}}`; a request that
 * never got an answer becomes an `ApiError` with status 0.
 */

export class ApiError extends Error {
  /** HTTP status, or 0 when no response arrived (network failure). */
  readonly status: number;
  /** Machine-readable error code from the server, or a derived one. */
  readonly code: string;
  /** Extra detail from the server (validation errors etc.), if any. */
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export interface RequestOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
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
    const { code, message, details } = parsed.error;
    return new ApiError(
      response.status,
      typeof code === "string" && code ? code : fallbackCode,
      typeof message === "string" && message ? message : fallbackMessage,
      details,
    );
  }
  return new ApiError(response.status, fallbackCode, fallbackMessage);
}

async function request<T>(
  method: string,
  path: string,
  body: unknown,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
  const init: RequestInit = {
    method,
    headers,
    credentials: "same-origin",
    signal: options.signal,
  };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }

  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Could not reach the Coach server. Check your connection and try again.", {
      cause: err instanceof Error ? err.message : String(err),
    });
  }

  if (!response.ok) {
    throw await errorFromResponse(response);
  }
  if (response.status === 204) {
    return undefined as T;
  }
  const text = await response.text();
  if (!text) {
    return undefined as T;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(response.status, "invalid_json", "The server sent a response that is not valid JSON.");
  }
}

export function apiGet<T>(path: string, options?: RequestOptions): Promise<T> {
  return request<T>("GET", path, undefined, options);
}

export function apiPost<T>(path: string, body?: unknown, options?: RequestOptions): Promise<T> {
  return request<T>("POST", path, body ?? {}, options);
}

/** A user-facing sentence for any error a query or mutation may throw. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error && err.message) return err.message;
  return "Something went wrong.";
}
