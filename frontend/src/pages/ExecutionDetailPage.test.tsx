import { act, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Execution } from "../api/types";
import { errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import ExecutionDetailPage from "./ExecutionDetailPage";

function execution(overrides: Partial<Execution> = {}): Execution {
  return {
    execution_id: "ex-1",
    workflow_id: "onboarding",
    workflow_version: 3,
    mode: "normal",
    status: "running",
    progress: { done: 1, total: 2, percent: 50 },
    is_coaching: false,
    steps: [
      { step_id: "collect", status: "succeeded", output: { customer: "Ada", items: [1, 2] } },
      { step_id: "review", status: "running", output: null },
    ],
    ...overrides,
  };
}

const completed = () =>
  execution({
    status: "completed",
    progress: { done: 2, total: 2, percent: 100 },
    steps: [
      { step_id: "collect", status: "succeeded", output: { customer: "Ada", items: [1, 2] } },
      { step_id: "review", status: "succeeded", output: { approved: true } },
    ],
  });

function renderDetail(id = "ex-1") {
  return renderPage(<ExecutionDetailPage />, { route: `/executions/${id}`, path: "/executions/:id" });
}

function stepItem(stepId: string): HTMLElement {
  return screen.getByRole("listitem", { name: stepId });
}

describe("ExecutionDetailPage", () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("names the workflow and links to it, its id beside the name", async () => {
    stubFetch((call) =>
      call.url.startsWith("/api/workflows")
        ? jsonResponse({ items: [{ id: "onboarding", name: "Customer onboarding", steps: [] }], total: 1, page: 1, per_page: 200 })
        : jsonResponse(execution()),
    );
    renderDetail();
    const link = await screen.findByRole("link", { name: "Customer onboarding" });
    expect(link).toHaveAttribute("href", "/workflows/onboarding");
    expect(link.closest("dd")).toHaveTextContent("Customer onboarding onboarding v3");
  });

  it("says a coaching run's mode once", async () => {
    stubFetch((call) =>
      call.url.startsWith("/api/workflows")
        ? jsonResponse({ items: [], total: 0, page: 1, per_page: 200 })
        : jsonResponse(execution({ mode: "coaching", is_coaching: true })),
    );
    renderDetail();
    const mode = (await screen.findByText("Mode")).nextElementSibling;
    expect(mode).toHaveTextContent(/^coaching$/);
  });

  it("says which webhook or schedule started it", async () => {
    const trigger = { hook_id: null, delivery_id: null, schedule_id: null, fire_at: null, at: "2026-11-28T00:00:00+00:00" };
    stubFetch((call) =>
      call.url === "/api/executions/ex-1"
        ? jsonResponse(completed())
        : call.url === "/api/executions/ex-2"
          ? jsonResponse({ ...completed(), execution_id: "ex-2", trigger: { ...trigger, kind: "webhook", name: "shop", hook_id: "h1", delivery_id: "d-42" } })
          : call.url === "/api/executions/ex-3"
            ? jsonResponse({ ...completed(), execution_id: "ex-3", trigger: { ...trigger, kind: "schedule", name: "mornings", schedule_id: "s1", fire_at: "2026-11-30T08:00:00+00:00" } })
            : errorResponse(404, "not_found", "no"),
    );
    const first = renderDetail("ex-2");
    expect((await screen.findByText("Started by")).nextElementSibling).toHaveTextContent("webhook “shop” delivery d-42");
    first.unmount();
    const second = renderDetail("ex-3");
    expect((await screen.findByText("Started by")).nextElementSibling).toHaveTextContent(/schedule “mornings” for /);
    second.unmount();
    renderDetail("ex-1");
    await screen.findByText("Progress");
    expect(screen.queryByText("Started by")).not.toBeInTheDocument();
  });

  it("shows each step's policy verdict and links a waiting approval to the queue", async () => {
    stubFetch(() =>
      jsonResponse(
        execution({
          status: "waiting_approval",
          gate: { kind: "approval", step_id: "write", approval_id: "ap-7", message: "Review the call of file.write" },
          steps: [
            {
              step_id: "write",
              status: "waiting",
              output: null,
              policy: {
                effect: "require_review",
                default: false,
                rule: { id: "r-1", name: "Only summaries/", scope: "workspace", order: 10, reason: "checked by a person" },
                matched: [],
              },
              approval: { approval_id: "ap-7", status: "pending", kind: "tool_call" },
            },
          ],
        }),
      ),
    );
    renderDetail();
    const write = await screen.findByRole("listitem", { name: "write" });
    expect(within(write).getByTestId("policy-verdict")).toHaveTextContent("Needs review Rule Only summaries/");
    expect(within(write).getByRole("link", { name: "Decide this tool call review on the queue" })).toHaveAttribute(
      "href",
      "/queue?approval=ap-7",
    );
    expect(screen.getByRole("link", { name: "Decide the approval on the queue" })).toHaveAttribute("href", "/queue?approval=ap-7");
  });

  it("shows each step's status and pretty-printed output", async () => {
    stubFetch(() => jsonResponse(execution()));
    renderDetail();

    expect(screen.getByRole("status")).toHaveTextContent("Loading execution…");
    expect(await screen.findByRole("heading", { level: 1 })).toHaveTextContent("Execution ex-1");

    const collect = await screen.findByRole("listitem", { name: "collect" });
    expect(within(collect).getByText("Succeeded")).toBeInTheDocument();
    const output = collect.querySelector("pre");
    expect(output?.textContent).toBe(JSON.stringify({ customer: "Ada", items: [1, 2] }, null, 2));

    const review = stepItem("review");
    expect(within(review).getByText("Running")).toBeInTheDocument();
    expect(within(review).getByText("No output yet.")).toBeInTheDocument();

    expect(screen.getByText("1 / 2 steps (50%)")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Cancel execution" })).toBeInTheDocument();
  });

  it("polls every second while running and stops once the run is terminal", async () => {
    const responses = [execution(), execution(), completed()];
    const { calls: all } = stubFetch((call) =>
      call.url.startsWith("/api/workflows")
        ? jsonResponse({ items: [] })
        : call.url.endsWith("/history")
          ? jsonResponse({ steps: [], events: [] })
          : jsonResponse(responses.shift() ?? completed()),
    );
    // not the workflow names, nor the run's history (polled on its own)
    const executionCalls = () => all.filter((c) => c.url.startsWith("/api/executions") && !c.url.endsWith("/history"));
    renderDetail();

    await screen.findByRole("listitem", { name: "review" });
    expect(executionCalls()).toHaveLength(1);
    expect(executionCalls()[0].url).toBe("/api/executions/ex-1");

    await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(executionCalls()).toHaveLength(2);

    await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(executionCalls()).toHaveLength(3);
    expect(await within(stepItem("review")).findByText("Succeeded")).toBeInTheDocument();
    expect(screen.getByText("2 / 2 steps (100%)")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Cancel execution" })).not.toBeInTheDocument();

    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(executionCalls()).toHaveLength(3);
  });

  it("names the failed step and the reason, with the ways on beside it", async () => {
    stubFetch(() =>
      jsonResponse(
        execution({
          status: "failed",
          error: { step_id: "review", message: "step 'review': KeyError: 'amount'" },
          steps: [
            { step_id: "collect", status: "succeeded", output: { ok: true } },
            { step_id: "review", name: "Review the invoice", type: "action", status: "failed", output: null,
              error: "KeyError: 'amount'" },
            { step_id: "send", status: "pending", output: null },
          ],
        }),
      ),
    );
    renderDetail();

    const banner = await screen.findByTestId("failure-banner");
    expect(within(banner).getByRole("heading")).toHaveTextContent("Step Review the invoice (review) failed");
    expect(within(banner).getByRole("alert")).toHaveTextContent("Reason: step 'review': KeyError: 'amount'");
    for (const name of ["Retry", "Retry with changes…", "Resume from…", "Re-run…"]) {
      expect(within(banner).getByRole("button", { name })).toBeInTheDocument();
    }
    expect(within(stepItem("review")).getByText("KeyError: 'amount'")).toBeInTheDocument();
    expect(within(stepItem("review")).getByText("Failed")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Cancel execution" })).not.toBeInTheDocument();
  });

  it("retries the failed step with the same params", async () => {
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const failed = execution({
      status: "failed",
      error: { step_id: "review", message: "boom" },
      steps: [{ step_id: "review", type: "action", status: "failed", output: null, error: "boom" }],
    });
    const { calls } = stubFetch(({ method, url }) =>
      method === "POST" && url === "/api/executions/ex-1/retry"
        ? jsonResponse({ execution_id: "ex-1", status: "resumed", step_id: "review", run: 2, skipped: [] })
        : jsonResponse(failed),
    );
    renderDetail();
    await user.click(await screen.findByRole("button", { name: "Retry" }));
    expect(await screen.findByText(/Retried review as run 2/)).toBeInTheDocument();
    const retry = calls.find((c) => c.method === "POST" && c.url === "/api/executions/ex-1/retry");
    expect(retry?.body).toEqual({ step_id: "review" });
  });

  it("cancels a running execution", async () => {
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    let cancelled = false;
    const { calls } = stubFetch(({ method, url }) => {
      if (method === "POST" && url === "/api/executions/ex-1/cancel") {
        cancelled = true;
        return jsonResponse(execution({ status: "cancelled" }));
      }
      return jsonResponse(cancelled ? execution({ status: "cancelled" }) : execution());
    });
    renderDetail();

    await user.click(await screen.findByRole("button", { name: "Cancel execution" }));

    expect(calls.some((c) => c.method === "POST" && c.url === "/api/executions/ex-1/cancel")).toBe(true);
    const summary = screen.getByText("Status").closest("div")!;
    expect(await within(summary).findByText("Cancelled")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Cancel execution" })).not.toBeInTheDocument();
  });

  it("shows the server's message when the execution does not exist", async () => {
    const { calls } = stubFetch(() => errorResponse(404, "not_found", "Execution ex-404 not found"));
    renderDetail("ex-404");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load this execution");
    expect(alert).toHaveTextContent("Execution ex-404 not found");

    await act(() => vi.advanceTimersByTimeAsync(3000));
    expect(calls).toHaveLength(1);
  });

  it("links coaching and auto executions to their coaching panel, and no other", async () => {
    stubFetch(() => jsonResponse(execution({ mode: "coaching", is_coaching: true })));
    const { unmount } = renderDetail();
    const link = await screen.findByRole("link", { name: "Open coaching panel" });
    expect(link).toHaveAttribute("href", "/executions/ex-1/coach");
    unmount();

    stubFetch(() => jsonResponse(execution({ mode: "auto" })));
    const auto = renderDetail();
    expect(await screen.findByRole("link", { name: "Open coaching panel" })).toBeInTheDocument();
    auto.unmount();

    stubFetch(() => jsonResponse(execution()));
    renderDetail();
    await screen.findByRole("listitem", { name: "review" });
    expect(screen.queryByRole("link", { name: "Open coaching panel" })).not.toBeInTheDocument();
  });
});
