import { QueryClientProvider } from "@tanstack/react-query";
import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Link, MemoryRouter, Route, Routes, useLocation } from "react-router-dom";
import { RealtimeProvider } from "../realtime/RealtimeProvider";
import { lastSocket } from "../test/fakeSocket";
import { changed } from "../test/queueChanged";
import { AsRole, errorResponse, jsonResponse, stubFetch, testQueryClient, type RecordedCall } from "../test/utils";
import { DashboardNotices } from "./DashboardNotices";
import { resetNoticeStore } from "./noticeStore";
import { NotificationsCenter } from "./NotificationsCenter";
import { NOTIFICATIONS_KEY } from "./preference";
import { installFakeNotification } from "./testNotifications";
import { QUEUE_RECHECK_MS, queueSizeKey } from "./useQueueArrivals";

afterEach(() => {
  resetNoticeStore();
  vi.unstubAllGlobals();
});

function Where() {
  return <p data-testid="where">{useLocation().pathname}</p>;
}

/** The header's centre on every page, as in the app; /dashboard shows the notices. */
function renderApp(route = "/queue") {
  const queryClient = testQueryClient();
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[route]}>
        <AsRole role="operator">
          <RealtimeProvider workspaceId="1">
            <NotificationsCenter />
            <Link to="/dashboard">Dashboard</Link>
            <Routes>
              <Route path="/dashboard" element={<DashboardNotices workflows={[{ workflow_id: "wf-1", name: "Refunds" }]} />} />
              <Route path="*" element={<p>Another page</p>} />
            </Routes>
            <Where />
          </RealtimeProvider>
        </AsRole>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return queryClient;
}

const queuePage = (total: number) => ({
  items: total ? [{ suggestion_id: "s1", execution_id: "e1", step_id: "refund", workflow_name: "Refunds", tool: "echo", params: {} }] : [],
  total,
  page: 1,
  per_page: 1,
});

function stubServer(queue: () => number = () => 0, notices: () => unknown[] = () => []) {
  return stubFetch((call: RecordedCall) => {
    if (call.url === "/api/coaching/queue?page=1&per_page=1") return jsonResponse(queuePage(queue()));
    if (call.url === "/api/notices") return jsonResponse({ items: notices() });
    if (call.url === "/api/workflows/wf-1") return jsonResponse({ id: "wf-1", name: "Refunds" });
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const demoted = (seq: number, extra: Record<string, unknown> = {}) => ({
  workflow_id: "wf-1", level: "COACHING", previous_level: "AUTO", mode: "coaching", previous_mode: "auto",
  reason: "spot checks show acceptance below 85% (spot-check acceptance 0%, test at level 0.2)", audit_seq: seq, ...extra,
});

const queueReads = (calls: RecordedCall[]) => calls.filter((c) => c.url.startsWith("/api/coaching/queue")).length;

describe("NotificationsCenter", () => {
  it("is a switch, off by default, that asks the browser's permission when turned on and remembers the choice", async () => {
    const Fake = installFakeNotification("default", "granted");
    stubServer();
    renderApp();
    const toggle = screen.getByRole("switch", { name: "Notifications" });
    expect(toggle).toHaveAttribute("aria-checked", "false");
    expect(Fake.requestPermission).not.toHaveBeenCalled();

    await userEvent.click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute("aria-checked", "true"));
    expect(Fake.requestPermission).toHaveBeenCalledTimes(1);
    expect(window.localStorage.getItem(NOTIFICATIONS_KEY)).toBe("on");

    await userEvent.click(toggle);
    expect(toggle).toHaveAttribute("aria-checked", "false");
    expect(window.localStorage.getItem(NOTIFICATIONS_KEY)).toBeNull();
  });

  it("says why when the browser refuses, and stays off", async () => {
    installFakeNotification("default", "denied");
    stubServer();
    renderApp();
    const toggle = screen.getByRole("switch", { name: "Notifications" });
    await userEvent.click(toggle);
    expect(await screen.findByRole("alert")).toHaveTextContent("This browser blocks Coach's notifications");
    expect(toggle).toHaveAttribute("aria-checked", "false");
    expect(toggle).toHaveAccessibleDescription(/allow them in the site settings/);
  });

  it("notifies a demotion once however often it is pushed, and not a promotion; a click opens the dashboard", async () => {
    const Fake = installFakeNotification("granted");
    window.localStorage.setItem(NOTIFICATIONS_KEY, "on");
    vi.spyOn(window, "focus").mockImplementation(() => undefined);
    stubServer();
    renderApp();
    await waitFor(() => expect(lastSocket().sent("join_workspace")).toHaveLength(1));

    act(() => lastSocket().push("workflow_level_changed", { ...demoted(101), mode: "auto", previous_mode: "coaching" }));
    act(() => lastSocket().push("workflow_level_changed", demoted(101)));
    act(() => lastSocket().push("workflow_level_changed", demoted(101)));
    await waitFor(() => expect(Fake.made).toHaveLength(1));
    expect(Fake.made[0].title).toBe("“Refunds” was demoted to coaching");
    expect(Fake.made[0].options.body).toBe("Spot checks show acceptance below 85% (spot-check acceptance 0%, test at level 0.2).");
    act(() => Fake.made[0].onclick?.());
    expect(screen.getByTestId("where")).toHaveTextContent("/dashboard");
  });

  it("notifies nothing while off, and does not read the queue", async () => {
    const Fake = installFakeNotification("granted");
    const { calls } = stubServer(() => 1);
    renderApp();
    await waitFor(() => expect(lastSocket().sent("join_workspace")).toHaveLength(1));
    act(() => lastSocket().push("workflow_level_changed", demoted(102)));
    act(() => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["e1", null])));
    await new Promise((resolve) => setTimeout(resolve, QUEUE_RECHECK_MS + 50));
    expect(Fake.made).toHaveLength(0);
    expect(queueReads(calls)).toBe(0);
  });

  it("notifies new work when the queue was empty, and reads the queue no more while an operator decides", async () => {
    const Fake = installFakeNotification("granted");
    window.localStorage.setItem(NOTIFICATIONS_KEY, "on");
    let total = 0;
    const { calls } = stubServer(() => total);
    const queryClient = renderApp();
    await waitFor(() => expect(queryClient.getQueryData(queueSizeKey("none"))).toBeDefined());
    await act(async () => undefined); // the empty queue is known
    expect(queueReads(calls)).toBe(1);

    total = 1;
    act(() => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["e1", null])));
    act(() => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["e1", null]))); // delivered twice
    await waitFor(() => expect(Fake.made).toHaveLength(1));
    expect(queueReads(calls)).toBe(2);
    expect(Fake.made[0].title).toBe("New work in the queue");
    expect(Fake.made[0].options.body).toBe("Refunds: step “refund”");

    // deciding: the run goes on to its next suggestion; the queue never emptied, nothing is read
    act(() => lastSocket().push("queue_changed", changed(["execution_update"], ["e1", "running"])));
    act(() => lastSocket().push("queue_changed", changed(["execution_update", "coaching_suggestion"], ["e1", "waiting_decision"])));
    await new Promise((resolve) => setTimeout(resolve, QUEUE_RECHECK_MS + 50));
    expect(queueReads(calls)).toBe(2);

    // the run finishes: the queue is read, is empty; the next item is news again
    total = 0;
    act(() => lastSocket().push("queue_changed", changed(["execution_update"], ["e1", "completed"])));
    await waitFor(() => expect(queueReads(calls)).toBe(3));
    total = 2;
    act(() => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["e2", null])));
    await waitFor(() => expect(Fake.made).toHaveLength(2));
    expect(Fake.made[1].options.body).toBe("Refunds: step “refund” (2 items waiting)");
    expect(Fake.made[1].options.tag).toBe(Fake.made[0].options.tag); // the newer replaces the older
  });

  it("reads the queue when the room's event names more executions than it carries, and hears a gateway review", async () => {
    const Fake = installFakeNotification("granted");
    window.localStorage.setItem(NOTIFICATIONS_KEY, "on");
    let total = 1;
    const { calls } = stubServer(() => total);
    const queryClient = renderApp();
    await waitFor(() => expect(queryClient.getQueryData(queueSizeKey("none"))).toBeDefined());
    expect(queueReads(calls)).toBe(1);

    // every execution named stays in the queue, but more changed than it names: one of them may have left
    total = 0;
    act(() => lastSocket().push("queue_changed", { ...changed(["execution_update"], ["e1", "running"]), truncated: true }));
    await waitFor(() => expect(queueReads(calls)).toBe(2));
    // a gateway call held for review (the workspace's own event, pushed as it is) is news in an empty queue
    total = 1;
    act(() => lastSocket().push("tool_call_pending_review", { source: "gateway", approval_id: "a1" }));
    await waitFor(() => expect(Fake.made).toHaveLength(1));
    expect(queueReads(calls)).toBe(3);
  });

  it("keeps notices pushed on another page for the dashboard, which announces them once", async () => {
    installFakeNotification("default");
    stubServer();
    renderApp("/queue");
    await waitFor(() => expect(lastSocket().sent("join_workspace")).toHaveLength(1));
    act(() => lastSocket().push("workflow_level_changed", demoted(103)));
    act(() =>
      lastSocket().push("correction_pack_changed", {
        pack_id: "p1", workflow_id: "wf-1", step_id: "refund", enabled: true, cause: "correction",
        rules_changed_at: "2026-11-24T10:00:00Z", audit_seq: 104, rules: [], stopped: [],
        started: [{ field: "currency", before: "EUR", after: "GBP", count: 3, share: 1 }],
      }),
    );

    await userEvent.click(screen.getByRole("link", { name: "Dashboard" }));
    const list = await screen.findByRole("heading", { name: "Notices" });
    expect(list).toBeInTheDocument();
    expect(screen.getByText("A learned rule now applies to step “refund” of “Refunds”")).toBeInTheDocument();
    expect(screen.getByText("“Refunds” was demoted to coaching")).toBeInTheDocument();
    const announced = screen.getByTestId("notices-announcement");
    expect(announced).toHaveAttribute("role", "status");
    await waitFor(() => expect(announced).toHaveTextContent(/^2 new notices\. A learned rule now applies/));
  });
});
