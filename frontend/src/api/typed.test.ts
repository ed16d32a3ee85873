import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, UNAUTHORIZED_EVENT, setCsrfToken, setSelectedWorkspace } from "./client";
import { api, unwrap } from "./typed";

function stub(response: () => Response) {
  const requests: Request[] = [];
  vi.stubGlobal("fetch", vi.fn(async (url: string, init: RequestInit) => {
    requests.push(new Request(new URL(url, window.location.origin), init));
    return response();
  }));
  return requests;
}

afterEach(() => {
  vi.unstubAllGlobals();
  setSelectedWorkspace(null);
  setCsrfToken(null);
});

describe("the typed client", () => {
  it("builds the query, sends the workspace and returns the JSON body", async () => {
    setSelectedWorkspace("ws-1");
    const requests = stub(() => Response.json({ items: [], total: 0, page: 1, per_page: 200 }));

    const page = await unwrap(api.GET("/api/workflows", { params: { query: { per_page: 200 } } }));

    expect(page.total).toBe(0);
    expect(requests).toHaveLength(1);
    expect(new URL(requests[0].url).pathname + new URL(requests[0].url).search).toBe("/api/workflows?per_page=200");
    expect(requests[0].method).toBe("GET");
    expect(requests[0].headers.get("X-Coach-Workspace")).toBe("ws-1");
    expect(requests[0].headers.get("X-CSRF-Token")).toBeNull();
  });

  it("sends the CSRF token and a JSON body on writes", async () => {
    setCsrfToken("tok");
    const requests = stub(() => Response.json({ id: "e1" }, { status: 201 }));

    await unwrap(api.POST("/api/executions/", { body: { workflow_id: "w1" } }));

    expect(requests[0].method).toBe("POST");
    expect(requests[0].headers.get("X-CSRF-Token")).toBe("tok");
    expect(await requests[0].json()).toEqual({ workflow_id: "w1" });
  });

  it("throws ApiError from the error envelope and fires the unauthorized event on 401", async () => {
    stub(() => Response.json({ error: { code: "unauthorized", message: "Log in." } }, { status: 401 }));
    const heard = vi.fn();
    window.addEventListener(UNAUTHORIZED_EVENT, heard);
    try {
      const failure = unwrap(api.GET("/api/workflows"));
      await expect(failure).rejects.toBeInstanceOf(ApiError);
      await expect(failure).rejects.toMatchObject({ status: 401, code: "unauthorized", message: "Log in." });
      expect(heard).toHaveBeenCalledTimes(1);
    } finally {
      window.removeEventListener(UNAUTHORIZED_EVENT, heard);
    }
  });

  it("turns a network failure into ApiError status 0", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => { throw new TypeError("Failed to fetch"); }));
    await expect(unwrap(api.GET("/api/workflows"))).rejects.toMatchObject({ status: 0, code: "network_error" });
  });
});
