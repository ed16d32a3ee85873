import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement, ReactNode } from "react";
import { MemoryRouter, Route, Routes, useLocation } from "react-router-dom";
import { vi } from "vitest";
import { AuthContext, type AuthContextValue } from "../auth/context";

/** A QueryClient for tests: no retries, nothing shared between tests. */
export function testQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, gcTime: Infinity },
      mutations: { retry: false },
    },
  });
}

/** Shows the current location, so tests can assert where navigation went. */
function LocationProbe() {
  const location = useLocation();
  return <div data-testid="location">{location.pathname + location.search}</div>;
}

/**
 * Renders `element` at `route` (matched by `path`) inside a router and a fresh
 * QueryClient. Other paths render a stub naming the path, so a navigation is
 * visible as text.
 */
export function renderPage(element: ReactElement, { route, path }: { route: string; path: string }) {
  const queryClient = testQueryClient();
  const utils = render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route path={path} element={element} />
          <Route path="*" element={<p>Other page</p>} />
        </Routes>
        <LocationProbe />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { ...utils, queryClient };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}

export function errorResponse(
  status: number,
  code: string,
  message: string,
  details?: unknown,
  headers?: Record<string, string>,
): Response {
  return jsonResponse({ error: { code, message, details } }, status, headers);
}

/** The headers a recorded call sent (the client always passes a plain object). */
export function headersOf(call: RecordedCall): Record<string, string> {
  return (call.init?.headers ?? {}) as Record<string, string>;
}

export interface RecordedCall {
  method: string;
  url: string;
  body: unknown;
  init: RequestInit | undefined;
}

/** A JSON body as data; any other text (a YAML definition) as it was sent. */
function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Replaces the browser's `fetch` with `handler`, recording each call.
 * The handler may return a Response or a promise of one.
 */
export function stubFetch(handler: (call: RecordedCall) => Response | Promise<Response>) {
  const calls: RecordedCall[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.toString() : input.url;
    const method = (init?.method ?? "GET").toUpperCase();
    const body = typeof init?.body === "string" ? parseBody(init.body) : undefined;
    const call = { method, url, body, init };
    calls.push(call);
    return handler(call);
  });
  vi.stubGlobal("fetch", fetchMock);
  return { calls, fetchMock };
}

/** Renders `children` for a signed-in user with `role` (what `useAuth` / `useIsLead` read), without the provider. */
export function AsRole({ role, children }: { role: string; children: ReactNode }) {
  const value = { status: "authenticated", role, user: null, workspaces: [], workspace: null } as unknown as AuthContextValue;
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
