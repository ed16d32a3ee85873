import { QueryClient } from "@tanstack/react-query";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coachingKeys } from "./api";
import { REFRESH_MAX_WAIT_MS, REFRESH_QUIET_MS, refreshExecution } from "./refresh";

function watched() {
  const queryClient = new QueryClient();
  const invalidated: string[] = [];
  vi.spyOn(queryClient, "invalidateQueries").mockImplementation(async (filters) => {
    invalidated.push(JSON.stringify(filters?.queryKey));
  });
  return { queryClient, invalidated };
}

describe("refreshExecution", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("reads once after a burst of pushes, the pending suggestion only when one of them asked for it", () => {
    const { queryClient, invalidated } = watched();
    refreshExecution(queryClient, "ex-1", { pending: false });
    vi.advanceTimersByTime(REFRESH_QUIET_MS - 10);
    refreshExecution(queryClient, "ex-1", { pending: false });
    refreshExecution(queryClient, "ex-1", { pending: false });
    expect(invalidated).toEqual([]);
    vi.advanceTimersByTime(REFRESH_QUIET_MS);
    expect(invalidated).toEqual([
      JSON.stringify(coachingKeys.execution("ex-1")),
      JSON.stringify(coachingKeys.queueAll),
    ]);

    invalidated.length = 0;
    refreshExecution(queryClient, "ex-1", { pending: false });
    refreshExecution(queryClient, "ex-1");
    vi.advanceTimersByTime(REFRESH_QUIET_MS);
    expect(invalidated).toContain(JSON.stringify(coachingKeys.pending("ex-1")));
    expect(invalidated).toHaveLength(3);
  });

  it("does not wait past the longest delay however long the pushes go on, and keeps executions apart", () => {
    const { queryClient, invalidated } = watched();
    for (let t = 0; t < REFRESH_MAX_WAIT_MS + 200; t += 50) {
      refreshExecution(queryClient, "ex-1", { pending: false });
      vi.advanceTimersByTime(50);
    }
    vi.advanceTimersByTime(REFRESH_QUIET_MS);
    expect(invalidated.filter((k) => k === JSON.stringify(coachingKeys.execution("ex-1"))).length).toBe(2);
    refreshExecution(queryClient, "ex-2", { pending: false });
    vi.advanceTimersByTime(REFRESH_QUIET_MS);
    expect(invalidated).toContain(JSON.stringify(coachingKeys.execution("ex-2")));
  });
});
