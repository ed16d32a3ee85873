import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { Execution } from "../api/types";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import { ApiError } from "../api/client";
import { asCorrectionError, variableErrors } from "./api";
import { FailureBanner, failedStep, failureReason, retryWarning } from "./FailureBanner";
import { RunHistory } from "./RunHistory";
import { formatDateTime } from "../format";

function failed(overrides: Partial<Execution> = {}): Execution {
  return {
    execution_id: "ex-1",
    workflow_id: "wf",
    workflow_version: 1,
    mode: "normal",
    status: "failed",
    progress: { done: 2, total: 3, percent: 66.7 },
    is_coaching: false,
    variables: { total: 5, customer: "Ada" },
    error: { step_id: "pay", message: "step 'pay': tool 'http.request' failed: 503" },
    steps: [
      { step_id: "read", status: "succeeded", output: {} },
      { step_id: "pay", name: "Pay", type: "action", tool: "http.request", status: "failed", output: null,
        error: "tool 'http.request' failed: 503", definition: { params: { amount: 5 } },
        params_schema: { type: "object", properties: { amount: { type: "number" } } } },
      { step_id: "notify", status: "pending", output: null },
    ],
    ...overrides,
  };
}

describe("failure rules of the banner", () => {
  it("names the step the error names, and its reason", () => {
    const ex = failed();
    expect(failedStep(ex)?.step_id).toBe("pay");
    expect(failureReason(ex, failedStep(ex))).toBe("step 'pay': tool 'http.request' failed: 503");
    const bare = failed({ error: null });
    expect(failureReason(bare, failedStep(bare))).toBe("tool 'http.request' failed: 503");
  });

  it("asks to confirm a plain retry of a call that may have had its effect", () => {
    const step = failedStep(failed())!;
    expect(retryWarning(step)).toBeNull();
    expect(retryWarning({ ...step, error: "tool 'http.request' failed: timed out after 30s" })).toMatch(/may have had its effect/);
    expect(
      retryWarning({ ...step, policy: { effect: "allow", default: true, rule: { id: null, name: "workspace default", scope: "workspace" }, matched: [], risk: "external" } }),
    ).toMatch(/Its tool is external/);
  });

  it("puts a retry's 422 on the editor's fields and a re-run's on the variables", () => {
    const retry = asCorrectionError(new ApiError(422, "validation_failed", "x", { "params.amount": ["not a number"], params: ["?"] }));
    expect((retry as ApiError).details).toEqual({ "correction.amount": ["not a number"], correction: ["?"] });
    expect(variableErrors(new ApiError(422, "validation_failed", "x", { "variables.total": ["is required"] }))).toEqual({
      total: ["is required"],
    });
  });
});

describe("FailureBanner", () => {
  it("resumes from a step that has not run", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ url }) =>
      url.endsWith("/resume-from")
        ? jsonResponse({ execution_id: "ex-1", status: "resumed", step_id: "notify", run: null, skipped: ["pay"] })
        : jsonResponse({}),
    );
    renderPage(
      <AsRole role="operator">
        <FailureBanner execution={failed()} onMessage={() => undefined} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    await user.click(screen.getByRole("button", { name: "Resume from…" }));
    const dialog = await screen.findByRole("dialog", { name: "Resume from a step" });
    expect(within(dialog).getByRole("combobox", { name: "Go on from step" })).toHaveValue("notify");
    await user.click(within(dialog).getByRole("button", { name: /Resume/ }));
    expect(calls.find((c) => c.url === "/api/executions/ex-1/resume-from")?.body).toEqual({ step_id: "notify" });
  });

  it("offers only the steps the server would resume from, the others greyed with the server's reason", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ url }) =>
      url.endsWith("/resume-from")
        ? jsonResponse({ execution_id: "ex-1", status: "resumed", step_id: "audit", run: null, skipped: ["pay"] })
        : jsonResponse({}),
    );
    const ex = failed();
    ex.steps.push({ step_id: "audit", name: "Audit", status: "pending", output: null });
    ex.resume_from = [
      { step_id: "notify", allowed: false, skips: [], reason: "step 'notify' reads the output of step 'pay', which has no output to give: retry 'pay' instead" },
      { step_id: "audit", allowed: true, reason: null, skips: ["pay"] },
    ];
    renderPage(
      <AsRole role="operator">
        <FailureBanner execution={ex} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    await user.click(screen.getByRole("button", { name: "Resume from…" }));
    const dialog = await screen.findByRole("dialog", { name: "Resume from a step" });
    const select = within(dialog).getByRole("combobox", { name: "Go on from step" });
    expect(select).toHaveValue("audit");
    expect(within(dialog).getByRole("option", { name: "notify (cannot be chosen)" })).toBeDisabled();
    expect(within(dialog).getByRole("option", { name: "Audit (audit)" })).toBeEnabled();
    expect(select).toHaveAccessibleDescription(/notify: step 'notify' reads the output of step 'pay'/);
    expect(dialog).toHaveTextContent("This skips pay.");
    await user.click(within(dialog).getByRole("button", { name: /Resume/ }));
    expect(calls.find((c) => c.url === "/api/executions/ex-1/resume-from")?.body).toEqual({ step_id: "audit" });
  });

  it("re-runs with changed variables, and shows the server's 422 on the variable", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ url }) =>
      url.endsWith("/rerun")
        ? errorResponse(422, "validation_failed", "invalid", { "variables.customer": ["is too long"] })
        : jsonResponse({}),
    );
    renderPage(
      <AsRole role="lead">
        <FailureBanner execution={failed()} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    await user.click(screen.getByRole("button", { name: "Re-run…" }));
    const dialog = await screen.findByRole("dialog", { name: "Re-run this execution" });
    const total = within(dialog).getByRole("textbox", { name: "total" });
    await user.clear(total);
    await user.type(total, "abc");
    await user.click(within(dialog).getByRole("button", { name: /Start the re-run/ }));
    expect(within(dialog).getByText("✕ must be a number")).toBeInTheDocument(); // kept, never blanked
    expect(total).toHaveValue("abc");
    expect(calls.some((c) => c.url.endsWith("/rerun"))).toBe(false);
    await user.clear(total);
    await user.type(total, "7");
    await user.click(within(dialog).getByRole("button", { name: /Start the re-run/ }));
    expect(await within(dialog).findByText("✕ is too long")).toBeInTheDocument();
    expect(calls.find((c) => c.url.endsWith("/rerun"))?.body).toEqual({ variables: { total: 7, customer: "Ada" } });
  });

  it("retries with changes a step whose param is a template, leaving the template to the server", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ url }) =>
      url.endsWith("/retry")
        ? jsonResponse({ execution_id: "ex-1", status: "resumed", step_id: "pay", run: 2, skipped: [] })
        : jsonResponse({}),
    );
    const ex = failed();
    ex.steps[1] = {
      ...ex.steps[1],
      definition: { params: { method: "GET", url: "{{ vars.base_url }}/healthz" } },
      params_schema: {
        type: "object",
        properties: { method: { enum: ["GET", "POST"] }, url: { type: "string", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" } },
        required: ["url"],
      },
    };
    const done = vi.fn();
    renderPage(
      <AsRole role="operator">
        <FailureBanner execution={ex} onMessage={done} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    await user.click(screen.getByRole("button", { name: "Retry with changes…" }));
    const dialog = await screen.findByRole("dialog", { name: "Retry step Pay (pay) with changes" });
    const url = await within(dialog).findByLabelText(/^url/);
    expect(url).toHaveValue("{{ vars.base_url }}/healthz");
    expect(within(dialog).queryByText(/does not match pattern/)).not.toBeInTheDocument();
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(within(dialog).queryByText("Not sent: fix these first.")).not.toBeInTheDocument();
    expect(calls.find((c) => c.url.endsWith("/retry"))?.body).toEqual({
      step_id: "pay",
      params: { method: "GET", url: "{{ vars.base_url }}/healthz" },
    });
    await vi.waitFor(() => expect(done).toHaveBeenCalledWith(expect.stringMatching(/^Retried pay with the changed params/)));
  });

  it("confirms a plain retry of a call that timed out before sending it", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ url }) =>
      url.endsWith("/retry")
        ? jsonResponse({ execution_id: "ex-1", status: "resumed", step_id: "pay", run: 2, skipped: [] })
        : jsonResponse({}),
    );
    const ex = failed();
    ex.steps[1] = { ...ex.steps[1], error: "tool 'http.request' failed: timed out after 30s" };
    renderPage(
      <AsRole role="operator">
        <FailureBanner execution={ex} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    await user.click(screen.getByRole("button", { name: "Retry" }));
    const dialog = await screen.findByRole("dialog", { name: "Retry step Pay (pay)?" });
    expect(calls.some((c) => c.url.endsWith("/retry"))).toBe(false);
    await user.click(within(dialog).getByRole("button", { name: "Retry anyway" }));
    expect(calls.find((c) => c.url.endsWith("/retry"))?.body).toEqual({ step_id: "pay" });
  });

  it("offers no re-run of a plan", () => {
    stubFetch(() => jsonResponse({}));
    renderPage(
      <AsRole role="lead">
        <FailureBanner execution={failed()} rerun={false} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    expect(screen.getByRole("button", { name: "Retry" })).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Re-run…" })).not.toBeInTheDocument();
  });

  it("does not offer an operator the re-run of a normal run (a lead's)", () => {
    stubFetch(() => jsonResponse({}));
    renderPage(
      <AsRole role="operator">
        <FailureBanner execution={failed()} />
      </AsRole>,
      { route: "/", path: "/" },
    );
    expect(screen.getByRole("button", { name: "Re-run…" })).toBeDisabled();
    expect(screen.getByText(/re-running it needs a lead/)).toBeInTheDocument();
  });
});

describe("RunHistory", () => {
  it("shows each step's events in words, with the correction's changes", async () => {
    stubFetch(() =>
      jsonResponse({
        execution_id: "ex-1",
        status: "completed",
        rerun_of: "ex-0",
        reruns: [],
        events: [{ kind: "start", at: "2026-01-01T00:00:00Z", actor: "op@x", step_id: null, text: "Started by op@x in coaching mode" }],
        steps: [
          {
            step_id: "pay", name: "Pay", type: "action", tool: "echo", status: "succeeded", error: null, run: 2,
            attempts: 1, retries: 1,
            events: [
              { kind: "pause", at: "2026-01-01T00:00:01Z", actor: "op@x", step_id: "pay",
                text: "Paused by op@x before this step: “Which account?”", question: "Which account?" },
              { kind: "resume", at: "2026-01-01T00:00:02Z", actor: "op@x", step_id: "pay",
                text: "Resumed by op@x with the answer: “blue”", answer: "blue" },
              { kind: "decision", at: "2026-01-01T00:00:03Z", actor: "op@x", step_id: "pay", decision: "correct",
                text: "Corrected by op@x: 1 change",
                changes: [{ path: "total", change: "changed", before: 5, after: 7 }] },
            ],
          },
        ],
      }),
    );
    renderPage(<RunHistory executionId="ex-1" live={false} />, { route: "/", path: "/" });
    expect(await screen.findByText("Paused by op@x before this step: “Which account?”")).toBeInTheDocument();
    expect(screen.getByText("Resumed by op@x with the answer: “blue”")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: /execution ex-0/ })).toHaveAttribute("href", "/executions/ex-0");
    const row = screen.getByRole("row", { name: /total/ });
    expect(row).toHaveTextContent("total57");
    expect(screen.getByText("retried 1×")).toBeInTheDocument();
    // its times are written as everywhere else in the app (format.ts), not in a format of its own
    expect(screen.getAllByText(formatDateTime("2026-01-01T00:00:01Z")).length).toBeGreaterThan(0);
  });

  it("on the panel, reads the history only once opened", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() => jsonResponse({ steps: [], events: [] }));
    renderPage(<RunHistory executionId="ex-1" live={false} collapsible />, { route: "/", path: "/" });
    const toggle = screen.getByRole("button", { name: "History" });
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(calls).toHaveLength(0);
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(calls.map((c) => c.url)).toEqual(["/api/executions/ex-1/history"]);
  });
});
