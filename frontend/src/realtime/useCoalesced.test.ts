import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { COALESCE_MAX_WAIT_MS, COALESCE_QUIET_MS, useCoalesced } from "./useCoalesced";

describe("useCoalesced", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("calls once after a burst has been quiet, not once per call", () => {
    const fn = vi.fn();
    const { result } = renderHook(() => useCoalesced(fn));
    act(() => {
      for (let i = 0; i < 20; i += 1) {
        result.current();
        vi.advanceTimersByTime(10);
      }
    });
    expect(fn).not.toHaveBeenCalled();
    act(() => vi.advanceTimersByTime(COALESCE_QUIET_MS));
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("still calls at least every max wait while a burst goes on", () => {
    const fn = vi.fn();
    const { result } = renderHook(() => useCoalesced(fn));
    act(() => {
      for (let elapsed = 0; elapsed < 3 * COALESCE_MAX_WAIT_MS; elapsed += 100) {
        result.current();
        vi.advanceTimersByTime(100);
      }
    });
    expect(fn.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(fn.mock.calls.length).toBeLessThanOrEqual(3);
  });

  it("calls the newest function, and nothing once unmounted", () => {
    const first = vi.fn();
    const second = vi.fn();
    const { result, rerender, unmount } = renderHook(({ fn }) => useCoalesced(fn), { initialProps: { fn: first } });
    act(() => result.current());
    rerender({ fn: second });
    act(() => vi.advanceTimersByTime(COALESCE_QUIET_MS));
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);

    act(() => result.current());
    unmount();
    act(() => vi.advanceTimersByTime(COALESCE_MAX_WAIT_MS));
    expect(second).toHaveBeenCalledTimes(1);
  });
});
