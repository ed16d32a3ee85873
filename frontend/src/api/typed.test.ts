import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, UNAUTHORIZED_EVENT, setCsrfToken, setSelectedWorkspace } from "./client";
import { api, omitWorkspace, textBody, unwrap } from "./typed";
import { forgetEarlyReads, startEarlyReads } from "../earlyReads";
import { setCookie } from "../test/auth";
import { headersOf, jsonResponse, stubFetch } from "../test/utils";

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

  it("leaves the workspace out when told, whatever is picked", async () => {
    setSelectedWorkspace("ws-1");
    const { calls } = stubFetch(() => jsonResponse({ user: null }));

    await api.GET("/api/auth/me", { ...omitWorkspace });
    await api.GET("/api/workflows");

    expect(headersOf(calls[0])["X-Coach-Workspace"]).toBeUndefined();
    expect(headersOf(calls[1])["X-Coach-Workspace"]).toBe("ws-1");
  });

  it("sends text as is with its content type, and JSON otherwise, headers spelt as the untyped calls spell them", async () => {
    setCookie("coach_csrf", "tok-7");
    const { calls } = stubFetch(() => jsonResponse({ id: "p1" }, 201));

    await unwrap(api.POST("/api/plans", textBody("name: p\nsteps: []\n", "application/yaml")));
    await unwrap(api.POST("/api/plans", { body: { name: "p", steps: [] } }));

    expect(calls[0].init?.body).toBe("name: p\nsteps: []\n");
    expect(headersOf(calls[0])["Content-Type"]).toBe("application/yaml");
    expect(headersOf(calls[0])["X-CSRF-Token"]).toBe("tok-7");
    expect(headersOf(calls[0]).Accept).toBe("application/json");
    expect(calls[1].body).toEqual({ name: "p", steps: [] });
    expect(headersOf(calls[1])["Content-Type"]).toBe("application/json");
  });

  it("takes the page load's early read of the same path instead of asking again", async () => {
    setSelectedWorkspace("ws-1");
    setCookie("coach_csrf", "tok");
    const { calls } = stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 200 }));
    forgetEarlyReads();
    try {
      startEarlyReads({ pathname: "/queue", search: "" });
      const asked = calls.length;

      await unwrap(api.GET("/api/workflows", { params: { query: { per_page: 200 } } }));
      await unwrap(api.GET("/api/workflows", { params: { query: { per_page: 200 } } }));

      expect(calls.length).toBe(asked + 1); // the first read took the early answer, the second asked
    } finally {
      forgetEarlyReads();
    }
  });

  it("turns a 2xx answer that is not JSON into ApiError invalid_json", async () => {
    stub(() => new Response("<html>", { status: 200, headers: { "Content-Type": "text/html" } }));
    await expect(unwrap(api.GET("/api/workflows"))).rejects.toMatchObject({ code: "invalid_json" });
  });
});
