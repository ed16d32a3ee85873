import { describe, expect, it } from "vitest";
import { ApiError, apiGet, apiPost, errorMessage } from "./client";
import { errorResponse, jsonResponse, stubFetch } from "../test/utils";

describe("apiGet", () => {
  it("returns the parsed JSON body and sends same-origin credentials", async () => {
    const { calls } = stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 20 }));

    const page = await apiGet<{ total: number }>("/api/workflows");

    expect(page.total).toBe(0);
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe("/api/workflows");
    expect(calls[0].method).toBe("GET");
    expect(calls[0].init?.credentials).toBe("same-origin");
    expect(calls[0].init?.body).toBeUndefined();
    expect((calls[0].init?.headers as Record<string, string>).Accept).toBe("application/json");
  });

  it("returns undefined for 204 No Content", async () => {
    stubFetch(() => new Response(null, { status: 204 }));
    await expect(apiGet("/api/anything")).resolves.toBeUndefined();
  });
});

describe("apiPost", () => {
  it("sends the body as JSON", async () => {
    const { calls } = stubFetch(() => jsonResponse({ execution_id: "ex-1" }, 201));

    const result = await apiPost<{ execution_id: string }>("/api/executions/", {
      workflow_id: "wf-1",
      variables: {},
      mode: "normal",
    });

    expect(result.execution_id).toBe("ex-1");
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

    const error = await apiPost("/api/executions/", {}).catch((e: unknown) => e);

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

    const error = (await apiGet("/api/workflows").catch((e: unknown) => e)) as ApiError;

    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
    expect(error.code).toBe("http_502");
    expect(error.message).toBe("Request failed: 502 Bad Gateway");
    expect(error.details).toBeUndefined();
  });

  it("fills in a missing code or message", async () => {
    stubFetch(() => jsonResponse({ error: { message: "Execution not found" } }, 404));

    const error = (await apiGet("/api/executions/nope").catch((e: unknown) => e)) as ApiError;

    expect(error.status).toBe(404);
    expect(error.code).toBe("http_404");
    expect(error.message).toBe("Execution not found");
  });

  it("reports a network failure with status 0", async () => {
    stubFetch(() => Promise.reject(new TypeError("Failed to fetch")));

    const error = (await apiGet("/api/workflows").catch((e: unknown) => e)) as ApiError;

    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(0);
    expect(error.code).toBe("network_error");
    expect(error.message).toMatch(/could not reach the coach server/i);
  });
});
