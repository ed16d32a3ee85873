import { QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { RealtimeProvider } from "../realtime/RealtimeProvider";
import { COALESCE_QUIET_MS } from "../realtime/useCoalesced";
import { lastSocket } from "../test/fakeSocket";
import { changed } from "../test/queueChanged";
import { jsonResponse, stubFetch, testQueryClient } from "../test/utils";
import { usePendingApprovals } from "./useApprovals";

function renderPending() {
  const { calls } = stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 50 }));
  const queryClient = testQueryClient();
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>
      <RealtimeProvider workspaceId="1">{children}</RealtimeProvider>
    </QueryClientProvider>
  );
  const hook = renderHook(() => usePendingApprovals(), { wrapper });
  const reads = () => calls.filter((c) => c.url.startsWith("/api/approvals?status=pending")).length;
  return { hook, reads };
}

describe("usePendingApprovals", () => {
  it("reads the pending approvals again when the workspace room says an execution changed state", async () => {
    const { hook, reads } = renderPending();
    await waitFor(() => expect(hook.result.current.isSuccess).toBe(true));
    expect(reads()).toBe(1);
    // a cancel expires the execution's approvals: its update is named in the room's small event
    act(() => lastSocket().push("queue_changed", changed(["execution_update"], ["ex-1", "cancelled"])));
    await waitFor(() => expect(reads()).toBe(2));
  });

  it("does not read them for a queue change without an execution's update, nor for an execution room's update", async () => {
    const { hook, reads } = renderPending();
    await waitFor(() => expect(hook.result.current.isSuccess).toBe(true));
    act(() => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["ex-1", null])));
    // (a page in an execution's room gets its updates in full: the small event stands for them all)
    act(() => lastSocket().push("execution_update", { execution_id: "ex-1", status: "running" }));
    await new Promise((resolve) => setTimeout(resolve, COALESCE_QUIET_MS + 100));
    expect(reads()).toBe(1);
  });
});
