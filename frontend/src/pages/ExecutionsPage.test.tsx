import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Execution } from "../api/types";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import ExecutionsPage from "./ExecutionsPage";

function execution(id: string, mode: string, status: string): Execution {
  return {
    execution_id: id,
    workflow_id: "wf-1",
    workflow_version: 1,
    mode,
    status,
    progress: { done: 0, total: 2, percent: 0 },
    steps: [],
    is_coaching: mode === "coaching",
  };
}

describe("ExecutionsPage", () => {
  it("links each coaching or auto execution still going to its coaching panel", async () => {
    const items = [
      execution("ex-coach", "coaching", "waiting_decision"),
      execution("ex-auto", "auto", "running"),
      execution("ex-done", "coaching", "completed"),
      execution("ex-normal", "normal", "running"),
    ];
    stubFetch(() => jsonResponse({ items, total: items.length, page: 1, per_page: 20 }));
    renderPage(<ExecutionsPage />, { route: "/executions", path: "/executions" });

    const links = await screen.findAllByRole("link", { name: /^Open the coaching panel of execution/ });
    expect(links.map((link) => link.getAttribute("href"))).toEqual([
      "/executions/ex-coach/coach",
      "/executions/ex-auto/coach",
    ]);
  });
});
