import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, jsonResponse, stubFetch, type RecordedCall } from "../test/utils";
import DashboardPage from "./DashboardPage";
import { globalMetrics, learningWorkflow, operators, readyWorkflow, renderLive } from "./testFixtures";
import type { Level, WorkflowMetrics } from "../api/metrics";

type Handler = (call: RecordedCall) => Response | undefined;

/** The dashboard's reads answered from fixtures; `override` answers first when it returns something. */
function stubDashboard(override: Handler = () => undefined, workflows: () => WorkflowMetrics[] = () => [readyWorkflow, learningWorkflow]) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === "/api/metrics/workflows") return jsonResponse({ items: workflows() });
    if (call.url === "/api/metrics/global") return jsonResponse(globalMetrics);
    if (call.url === "/api/metrics/operators") return jsonResponse({ items: operators });
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

function renderDashboard(role = "lead") {
  return renderLive(<DashboardPage />, "/dashboard", "/dashboard", role);
}

async function workflowRow(name: string) {
  const link = await screen.findByRole("link", { name });
  return link.closest("tr")!;
}

const cellsOf = (row: HTMLElement) => within(row).getAllByRole("cell").map((c) => c.textContent);

describe("DashboardPage", () => {
  it("shows each workflow's level, AUTO-readiness, mode, rates and latency from the metrics payload", async () => {
    stubDashboard();
    renderDashboard();

    expect(screen.getByRole("heading", { level: 1, name: "Dashboard" })).toBeInTheDocument();
    const ready = await workflowRow("Invoice intake");
    expect(cellsOf(ready)).toEqual([
      "●AUTO-ready",
      "✓AUTO-ready",
      "24",
      "91.7%",
      "91.7%last 24/50",
      "74.2%",
      "900 ms / 2.1 s",
      "CoachingPromote Invoice intake to AUTO",
    ]);
    expect(within(ready).getByRole("link", { name: "Invoice intake" })).toHaveAttribute("href", "/workflows/wf-invoice");

    const learning = await workflowRow("Refund request");
    const [level, flag, decisions] = cellsOf(learning);
    expect([level, decisions]).toEqual(["◐Coaching", "12"]);
    expect(within(learning).getByText("Coaching", { selector: "[data-mode]" })).toBeInTheDocument();
    expect(flag).toContain("Not ready");
    expect(flag).toContain("Needs 8 more counted decisions in the window; acceptance to rise 10 points to reach the 85% bar");

    const table = ready.closest("table")!;
    expect(within(table).getByText(/Workflows by learning level, 2 in total/)).toBeInTheDocument();
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Workflow",
      "Level",
      "AUTO-ready",
      "Decisions",
      "Acceptance",
      "Rolling acceptance",
      "Confidence",
      "Latency median / p90",
      "Mode",
    ]);
  });

  it("shows the workspace totals and one row per operator", async () => {
    stubDashboard();
    renderDashboard();

    const summary = await screen.findByLabelText("Workspace totals");
    expect(summary).toHaveTextContent("AUTO-ready workflows1");
    expect(summary).toHaveTextContent("86.1%");
    expect(summary).toHaveTextContent("1 AUTO-ready, 1 Coaching");

    const ann = (await screen.findByRole("rowheader", { name: "ann@example.com" })).closest("tr")!;
    expect(cellsOf(ann)).toEqual(["20", "18", "2", "0", "90%", "700 ms / 1.5 s"]);
    expect(screen.getByRole("rowheader", { name: "bob@example.com" })).toBeInTheDocument();
  });

  it("describes the charts in words and lists their points in a table", async () => {
    stubDashboard();
    renderDashboard();

    const acceptance = await screen.findByRole("figure", { name: /Acceptance over time — all workflows/ });
    expect(acceptance).toHaveTextContent("36 decisions over 2 hours with activity: acceptance went from 60%");
    expect(acceptance).toHaveTextContent("to 96.2%");
    const latency = screen.getByRole("figure", { name: /Decision latency — all workflows/ });
    expect(latency).toHaveTextContent("between 800 ms and 2.4 s; latest 800 ms");

    const data = screen.getByRole("table", { name: "Decisions per hour — all workflows" });
    const rows = within(data).getAllByRole("row").slice(1);
    expect(rows.map((r) => within(r).getAllByRole("cell").map((c) => c.textContent))).toEqual([
      ["10", "6", "1", "3", "0", "0", "60%", "2.4 s"],
      ["26", "25", "1", "0", "0", "0", "96.2%", "800 ms"],
    ]);
  });

  it("charts one workflow when it is picked", async () => {
    const user = userEvent.setup();
    const { calls } = stubDashboard((call) =>
      call.url === "/api/metrics/workflows/wf-refund"
        ? jsonResponse({ ...learningWorkflow, series: [{ ...globalMetrics.series[0]!, decisions: 12 }] })
        : undefined,
    );
    renderDashboard();

    await workflowRow("Refund request");
    await user.selectOptions(screen.getByLabelText("Charts for"), "Refund request");
    const figure = await screen.findByRole("figure", { name: /Acceptance over time — “Refund request”/ });
    expect(figure).toHaveTextContent("12 decisions in one hour");
    expect(calls.some((c) => c.url === "/api/metrics/workflows/wf-refund")).toBe(true);
  });

  it("promotes an AUTO-ready workflow after confirmation, with the keyboard", async () => {
    const user = userEvent.setup();
    let promoted = false;
    const { calls } = stubDashboard(
      (call) => {
        if (call.method === "POST" && call.url === "/api/workflows/wf-invoice/mode") {
          promoted = true;
          return jsonResponse({ id: "wf-invoice", name: "Invoice intake", mode: "auto", level: "AUTO" });
        }
        return undefined;
      },
      () => [promoted ? { ...readyWorkflow, mode: "auto" } : readyWorkflow, learningWorkflow],
    );
    renderDashboard();

    const promote = await screen.findByRole("button", { name: "Promote Invoice intake to AUTO" });
    promote.focus();
    await user.keyboard("{Enter}");

    const dialog = screen.getByRole("dialog", { name: "Promote “Invoice intake” to AUTO?" });
    expect(dialog).toHaveTextContent("Its evidence says AUTO-ready.");
    // focus starts on Cancel: a stray Enter must not promote
    expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    expect(calls.filter((c) => c.method === "POST")).toEqual([]);
    await user.tab(); // to the confirm button, deliberately
    expect(within(dialog).getByRole("button", { name: "Promote to AUTO" })).toHaveFocus();
    await user.keyboard("{Enter}");

    expect(await screen.findByText(/“Invoice intake” is now in AUTO mode/)).toBeInTheDocument();
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    const post = calls.find((c) => c.method === "POST")!;
    expect(post.body).toEqual({ mode: "auto" });

    const row = await workflowRow("Invoice intake");
    await waitFor(() => expect(row.querySelector("[data-mode]")).toHaveTextContent("AUTO"));
    const demote = within(row).getByRole("button", { name: "Demote Invoice intake to coaching" });
    expect(demote).toHaveFocus();
  });

  it("keeps Tab inside the confirmation, cancels it with Escape and sends nothing", async () => {
    const user = userEvent.setup();
    const { calls } = stubDashboard();
    renderDashboard();

    const promote = await screen.findByRole("button", { name: "Promote Invoice intake to AUTO" });
    await user.click(promote);
    const dialog = screen.getByRole("dialog");
    const confirm = within(dialog).getByRole("button", { name: "Promote to AUTO" });
    const cancel = within(dialog).getByRole("button", { name: "Cancel" });
    expect(cancel).toHaveFocus();
    await user.tab();
    expect(confirm).toHaveFocus();
    await user.tab(); // Tab stays inside the dialog: from its last button back to its first
    expect(cancel).toHaveFocus();
    await user.tab({ shift: true });
    expect(confirm).toHaveFocus();
    await user.keyboard("{Escape}");

    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(promote).toHaveFocus();
    expect(calls.filter((c) => c.method === "POST")).toEqual([]);
  });

  it("offers a lead no promotion the evidence does not allow; an admin forces it with a reason, and sees a 409", async () => {
    const user = userEvent.setup();
    const { calls } = stubDashboard((call) =>
      call.method === "POST"
        ? errorResponse(409, "conflict", "this workflow is not AUTO-ready yet", { level: "COACHING", auto_ready: false })
        : undefined,
    );
    const { unmount } = renderDashboard();
    const row = await workflowRow("Refund request");
    expect(within(row).queryByRole("button", { name: /Promote/ })).not.toBeInTheDocument();
    expect(row).toHaveTextContent("Not AUTO-ready: promotion waits for the evidence");
    unmount();

    renderDashboard("admin");
    await user.click(await screen.findByRole("button", { name: "Force Refund request into AUTO…" }));
    const dialog = screen.getByRole("dialog", { name: "Force “Refund request” into AUTO?" });
    expect(dialog).toHaveTextContent("It is not AUTO-ready yet (level Coaching)");
    await user.click(within(dialog).getByRole("button", { name: "Force into AUTO" }));
    expect(within(dialog).getByText("✕ A forced promotion needs a reason.")).toBeInTheDocument();
    expect(calls.filter((c) => c.method === "POST")).toEqual([]);

    await user.type(within(dialog).getByLabelText(/Why overrule the evidence/), "month-end batch");
    await user.click(within(dialog).getByRole("button", { name: "Force into AUTO" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not promote “Refund request”");
    expect(alert).toHaveTextContent("this workflow is not AUTO-ready yet. Its level is Coaching.");
    expect(calls.filter((c) => c.method === "POST").map((c) => c.body)).toEqual([
      { mode: "auto", force: true, reason: "month-end batch" },
    ]);
  });

  it("tells an operator that totals and operators are for leads only, and still lists the workflows", async () => {
    stubDashboard((call) =>
      call.url === "/api/metrics/global" || call.url === "/api/metrics/operators"
        ? errorResponse(403, "forbidden", "this needs the lead role")
        : undefined,
    );
    renderDashboard("operator");

    const row = await workflowRow("Invoice intake");
    // the mode is shown, not the lead's buttons (promote / demote, a step's promote / pin)
    expect(row.querySelector("[data-mode]")).toHaveTextContent("Coaching");
    expect(screen.queryAllByRole("button", { name: /^(Promote|Demote|Pin|Unpin|Back to coaching)\b/ })).toEqual([]);
    await waitFor(() => expect(screen.getAllByText("Leads only")).toHaveLength(3));
    expect(screen.getByText(/Workspace totals are shown to team leads/)).toBeInTheDocument();
    expect(screen.getByText(/Per-operator metrics are shown to team leads/)).toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("joins the workspace room, patches the row from a metrics_update and then refetches", async () => {
    let decisions = 24;
    let release: () => void = () => undefined;
    let gate: Promise<void> | null = null;
    const { calls } = stubFetch(async (call) => {
      if (call.url === "/api/metrics/workflows") {
        if (gate) await gate; // the refetch waits until the test has seen the patched row
        return jsonResponse({ items: [{ ...readyWorkflow, decisions }, learningWorkflow] });
      }
      if (call.url === "/api/metrics/global") return jsonResponse(globalMetrics);
      if (call.url === "/api/metrics/operators") return jsonResponse({ items: operators });
      return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
    });
    renderDashboard();
    const row = await workflowRow("Invoice intake");
    await waitFor(() => expect(lastSocket().sent("join_workspace")).toHaveLength(1));
    const reads = () => calls.filter((c) => c.url === "/api/metrics/workflows").length;
    const before = reads();

    decisions = 26;
    gate = new Promise((resolve) => (release = resolve));
    act(() => lastSocket().push("metrics_update", { ...readyWorkflow, workflow_id: "wf-invoice", decisions: 25 }));
    await waitFor(() => expect(cellsOf(row)[2]).toBe("25")); // patched from the event at once…
    await waitFor(() => expect(reads()).toBe(before + 1)); // …and refetched
    release();
    await waitFor(() => expect(cellsOf(row)[2]).toBe("26")); // the server's answer wins
    expect(calls.filter((c) => c.url === "/api/metrics/global").length).toBeGreaterThan(1);
  });

  it("announces a level change and refetches", async () => {
    let level: Level = "COACHING";
    const { calls } = stubDashboard(undefined, () => [readyWorkflow, { ...learningWorkflow, level, auto_ready: level === "AUTO" }]);
    renderDashboard();
    const row = await workflowRow("Refund request");
    const before = calls.length;

    level = "AUTO";
    act(() =>
      lastSocket().push("workflow_level_changed", {
        workflow_id: "wf-refund",
        level: "AUTO",
        previous_level: "COACHING",
        auto_ready: true,
        mode: "coaching",
      }),
    );
    expect(screen.getByText("“Refund request” moved from Coaching to AUTO-ready; its mode is Coaching.")).toHaveAttribute("role", "status");
    await waitFor(() => expect(calls.length).toBeGreaterThan(before));
    await waitFor(() => expect(row.querySelector('[data-auto-ready="true"]')).toHaveTextContent("AUTO-ready"));
  });
});
