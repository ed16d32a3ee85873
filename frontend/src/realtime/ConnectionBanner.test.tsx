import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CONNECTING_NOTICE_MS, ConnectionBanner } from "./RealtimeProvider";

describe("ConnectionBanner", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("says nothing while a page's first connection is quick, and speaks up when it is slow", () => {
    const { rerender } = render(<ConnectionBanner status="connecting" />);
    expect(screen.queryByRole("status")).not.toBeInTheDocument();
    act(() => vi.advanceTimersByTime(CONNECTING_NOTICE_MS - 100));
    rerender(<ConnectionBanner status="online" />);
    act(() => vi.advanceTimersByTime(1_000));
    expect(screen.queryByRole("status")).not.toBeInTheDocument();

    rerender(<ConnectionBanner status="connecting" />);
    act(() => vi.advanceTimersByTime(CONNECTING_NOTICE_MS));
    expect(screen.getByRole("status")).toHaveTextContent("Connecting to live updates…");
  });

  it("says at once when the connection is lost", () => {
    render(<ConnectionBanner status="offline" />);
    expect(screen.getByRole("status")).toHaveTextContent("Offline — live updates paused, reconnecting…");
    expect(screen.getByRole("status")).toHaveClass("connection-banner");
  });
});
