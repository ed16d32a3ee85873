import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Execution } from "../api/types";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import ExecutionsPage from "./ExecutionsPage";

function execution(id: string, mode: Execution["mode"], status: Execution["status"]): Execution {
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

describe("ExecutionsPage filters and cancel", () => {
  it("names the workflow, shows start and finish, filters through the API and cancels after a confirmation", async () => {
    const running = { ...execution("ex-run", "coaching", "waiting_decision"), workflow_name: "Refund", started_at: "2026-01-02T10:00:00Z" };
    const done = { ...execution("ex-done", "normal", "completed"), workflow_name: "Intake", started_at: "2026-01-02T09:00:00Z", finished_at: "2026-01-02T09:05:00Z" };
    const { calls } = stubFetch((call) => {
      if (call.url.startsWith("/api/workflows")) {
        return jsonResponse({ items: [{ id: "wf-1", name: "Refund", version: 1, level: "COACHING", mode: "coaching", steps: [] }], total: 1, page: 1, per_page: 200 });
      }
      if (call.method === "POST") return jsonResponse({ ...running, status: "cancelled" });
      return jsonResponse({ items: [running, done], total: 2, page: 1, per_page: 20 });
    });
    renderPage(<ExecutionsPage />, { route: "/executions", path: "/executions" });
    const user = userEvent.setup();

    expect(await screen.findByRole("link", { name: "Refund, execution ex-run" })).toBeInTheDocument();
    const doneRow = screen.getByRole("row", { name: /Intake/ });
    expect(within(doneRow).getAllByRole("cell")[4]).not.toHaveTextContent("—");
    expect(within(doneRow).queryByRole("button", { name: /Cancel/ })).not.toBeInTheDocument();

    await user.selectOptions(await screen.findByLabelText("Workflow"), "wf-1");
    await waitFor(() => expect(calls.some((c) => c.url === "/api/executions/?workflow_id=wf-1")).toBe(true));
    await user.selectOptions(screen.getByLabelText("Status"), "completed");
    await waitFor(() => expect(calls.some((c) => c.url === "/api/executions/?workflow_id=wf-1&status=completed")).toBe(true));
    expect(screen.getByTestId("location")).toHaveTextContent("workflow_id=wf-1&status=completed");

    await user.click(screen.getByRole("button", { name: "Cancel execution ex-run" }));
    const dialog = screen.getByRole("dialog", { name: "Cancel this execution?" });
    expect(within(dialog).getByRole("button", { name: "Keep running" })).toHaveFocus();
    expect(within(dialog).queryByRole("button", { name: "Cancel" })).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Cancel execution" }));
    await waitFor(() => expect(calls.some((c) => c.method === "POST" && c.url === "/api/executions/ex-run/cancel")).toBe(true));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  });
});
