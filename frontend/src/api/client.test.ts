import { describe, expect, it, vi } from "vitest";
import {
  ApiError,
  UNAUTHORIZED_EVENT,
  errorMessage,
  getSelectedWorkspace,
  parseRetryAfter,
  send,
  setCsrfToken,
  setSelectedWorkspace,
} from "./client";
import { setCookie } from "../test/auth";
import { errorResponse, headersOf, jsonResponse, stubFetch } from "../test/utils";

// `send` is the web app's one request path (the typed client's fetch, ./typed.ts): these read it directly.
const get = (path: string, omitWorkspace = false) => send(path, { method: "GET", omitWorkspace });
const write = (method: string, path: string, body?: unknown) =>
  send(path, {
    method,
    headers: body === undefined ? undefined : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("a read", () => {
  it("answers the server's response and sends same-origin credentials", async () => {
    const { calls } = stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 20 }));

    const page = (await (await get("/api/workflows")).json()) as { total: number };

    expect(page.total).toBe(0);
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe("/api/workflows");
    expect(calls[0].method).toBe("GET");
    expect(calls[0].init?.credentials).toBe("same-origin");
    expect(calls[0].init?.body).toBeUndefined();
    expect((calls[0].init?.headers as Record<string, string>).Accept).toBe("application/json");
  });

});

describe("a write", () => {
  it("sends its body with the caller's content type", async () => {
    const { calls } = stubFetch(() => jsonResponse({ execution_id: "ex-1" }, 201));

    const response = await write("POST", "/api/executions/", {
      workflow_id: "wf-1",
      variables: {},
      mode: "normal",
    });

    expect(((await response.json()) as { execution_id: string }).execution_id).toBe("ex-1");
    expect(calls[0].method).toBe("POST");
    expect(calls[0].body).toEqual({ workflow_id: "wf-1", variables: {}, mode: "normal" });
    expect(calls[0].init?.credentials).toBe("same-origin");
    expect((calls[0].init?.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
  });
});

describe("ApiError", () => {
  it("carries status, code, message and details from the server's error body", async () => {
    const details = { fields: { workflow_id: "is required" } };
    stubFetch(() => errorResponse(422, "validation_error", "workflow_id is required", details));

    const error = await write("POST", "/api/executions/", {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(422);
    expect(apiError.code).toBe("validation_error");
    expect(apiError.message).toBe("workflow_id is required");
    expect(apiError.details).toEqual(details);
    expect(errorMessage(apiError)).toBe("workflow_id is required");
  });

  it("falls back to the HTTP status when the body is not the error envelope", async () => {
    stubFetch(() => new Response("<h1>Bad Gateway</h1>", { status: 502, statusText: "Bad Gateway" }));

    const error = (await get("/api/workflows").catch((e: unknown) => e)) as ApiError;

    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
    expect(error.code).toBe("http_502");
    expect(error.message).toBe("Request failed: 502 Bad Gateway");
    expect(error.details).toBeUndefined();
  });

  it("fills in a missing code or message", async () => {
    stubFetch(() => jsonResponse({ error: { message: "Execution not found" } }, 404));

    const error = (await get("/api/executions/nope").catch((e: unknown) => e)) as ApiError;

    expect(error.status).toBe(404);
    expect(error.code).toBe("http_404");
    expect(error.message).toBe("Execution not found");
  });

  it("reports a network failure with status 0", async () => {
    stubFetch(() => Promise.reject(new TypeError("Failed to fetch")));

    const error = (await get("/api/workflows").catch((e: unknown) => e)) as ApiError;

    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(0);
    expect(error.code).toBe("network_error");
    expect(error.message).toMatch(/could not reach the coach server/i);
  });
});

describe("CSRF token", () => {
  it("sends X-CSRF-Token from the coach_csrf cookie on POST, and not on GET", async () => {
    setCookie("other", "x");
    setCookie("coach_csrf", "tok/123=");
    const { calls } = stubFetch(() => jsonResponse({}));

    await get("/api/workflows");
    await write("POST", "/api/executions/", { workflow_id: "wf-1" });

    expect(headersOf(calls[0])["X-CSRF-Token"]).toBeUndefined();
    expect(headersOf(calls[1])["X-CSRF-Token"]).toBe("tok/123=");
  });

  it("sends it on PUT, PATCH and DELETE too", async () => {
    setCookie("coach_csrf", "tok-9");
    const { calls } = stubFetch(() => new Response(null, { status: 204 }));

    await write("PUT", "/api/workflows/wf-1", { name: "A" });
    await write("PATCH", "/api/workflows/wf-1", { name: "B" });
    await write("DELETE", "/api/auth/tokens/3");

    expect(calls.map((c) => c.method)).toEqual(["PUT", "PATCH", "DELETE"]);
    expect(calls.map((c) => headersOf(c)["X-CSRF-Token"])).toEqual(["tok-9", "tok-9", "tok-9"]);
    expect(calls[0].body).toEqual({ name: "A" });
    expect(calls[2].init?.body).toBeUndefined();
  });

  it("falls back to the token of the last login answer when the cookie is missing", async () => {
    setCsrfToken("from-answer");
    const { calls } = stubFetch(() => jsonResponse({}));

    await write("POST", "/api/executions/ex-1/cancel");

    expect(headersOf(calls[0])["X-CSRF-Token"]).toBe("from-answer");
  });
});

describe("workspace header", () => {
  it("sends X-Coach-Workspace only when a workspace is selected", async () => {
    const { calls } = stubFetch(() => jsonResponse({}));

    await get("/api/workflows");
    setSelectedWorkspace("2");
    await get("/api/workflows");
    await get("/api/auth/me", true);

    expect(headersOf(calls[0])["X-Coach-Workspace"]).toBeUndefined();
    expect(headersOf(calls[1])["X-Coach-Workspace"]).toBe("2");
    expect(headersOf(calls[2])["X-Coach-Workspace"]).toBeUndefined();
    expect(getSelectedWorkspace()).toBe("2");
    expect(window.localStorage.getItem("coach.workspace")).toBe("2");
  });
});

describe("401 answers", () => {
  it("fire coach:unauthorized, except from the login call", async () => {
    const events: CustomEvent[] = [];
    const listener = (e: Event) => events.push(e as CustomEvent);
    window.addEventListener(UNAUTHORIZED_EVENT, listener);
    stubFetch(() => errorResponse(401, "unauthorized", "Log in first"));

    await expect(get("/api/workflows?page=2")).rejects.toMatchObject({ status: 401 });
    expect(events).toHaveLength(1);
    expect(UNAUTHORIZED_EVENT).toBe("coach:unauthorized");
    expect(events[0].detail).toEqual({ method: "GET", path: "/api/workflows?page=2" });

    await expect(write("POST", "/api/auth/login", { email: "a", password: "b" })).rejects.toMatchObject({
      status: 401,
    });
    expect(events).toHaveLength(1);
    window.removeEventListener(UNAUTHORIZED_EVENT, listener);
  });

  it("are the only ones that do", async () => {
    const listener = vi.fn();
    window.addEventListener(UNAUTHORIZED_EVENT, listener);
    stubFetch(() => errorResponse(403, "forbidden", "Not allowed"));

    await expect(get("/api/audit")).rejects.toMatchObject({ status: 403 });
    expect(listener).not.toHaveBeenCalled();
    window.removeEventListener(UNAUTHORIZED_EVENT, listener);
  });
});

describe("Retry-After", () => {
  it("is read into ApiError.retryAfter, in seconds or as a date", async () => {
    stubFetch(() => errorResponse(429, "too_many_requests", "Slow down", undefined, { "Retry-After": "42" }));
    const error = (await write("POST", "/api/auth/login", {}).catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(429);
    expect(error.retryAfter).toBe(42);

    stubFetch(() => errorResponse(429, "too_many_requests", "Slow down", { retry_after_s: 12 }));
    const fromDetails = (await write("POST", "/api/auth/login", {}).catch((e: unknown) => e)) as ApiError;
    expect(fromDetails.retryAfter).toBe(12);

    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:01:30 GMT", now)).toBe(90);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});
