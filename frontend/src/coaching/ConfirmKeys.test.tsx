import { act, renderHook, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, jsonResponse } from "../test/utils";
import { CONFIRM_WINDOW_MS, confirmPrompt, needsConfirmation, riskReason, useConfirmation } from "./confirmation";
import { SHORTCUT_STORAGE_KEY, reloadShortcutMode } from "./shortcutPreference";
import { execution, metrics, pending, stats, suggestion } from "./testFixtures";
import type { PolicyVerdict } from "../approvals/types";
import type { PendingSuggestions, Suggestion } from "./types";

const FLAGGED: PolicyVerdict = {
  effect: "require_review",
  default: false,
  rule: { id: "1", name: "Big payments", scope: "workspace" },
  matched: [],
};
const payment = (overrides: Partial<Suggestion> = {}) =>
  suggestion({
    step_id: "pay",
    step_name: "Pay the supplier",
    tool: "http.request",
    risk: "external",
    params: { url: "https://pay.example/transfers", method: "POST", json: { amount: 1840, currency: "EUR" } },
    ...overrides,
  });

describe("which decisions take a confirming key", () => {
  it("accept and skip on an external or destructive call, or one the policy flagged; the rest stay one key", () => {
    expect(needsConfirmation("accept", payment())).toBe(true);
    expect(needsConfirmation("skip", payment({ risk: "destructive" }))).toBe(true);
    expect(needsConfirmation("accept", suggestion({ risk: "write", policy: { ...FLAGGED } }))).toBe(true);
    expect(needsConfirmation("accept", suggestion({ risk: "write" }))).toBe(false);
    expect(needsConfirmation("skip", suggestion({ risk: "read" }))).toBe(false);
    expect(needsConfirmation("accept", suggestion({ risk: "read", policy: { ...FLAGGED, effect: "allow" } }))).toBe(false);
    // reject, correct and manual open a dialog first: they are confirmed by it
    expect(needsConfirmation("reject", payment())).toBe(false);
    expect(needsConfirmation("correct", payment())).toBe(false);
    expect(riskReason(suggestion({ risk: "destructive", policy: { ...FLAGGED } }))).toBe(
      'destructive, flagged by the policy "Big payments"',
    );
  });

  it("says what is confirmed, with the amount", () => {
    expect(confirmPrompt("accept", "Pay the supplier", payment())).toBe(
      "Press Enter to accept Pay the supplier (http.request, amount 1,840; external).",
    );
  });
});

describe("useConfirmation", () => {
  afterEach(() => vi.useRealTimers());

  it("lapses after the window, and confirms only the item it was armed for", () => {
    vi.useFakeTimers();
    const { result } = renderHook(() => useConfirmation<"accept">());
    act(() => result.current.arm({ action: "accept", target: "sug-1", prompt: "p" }));
    expect(result.current.armed?.target).toBe("sug-1");
    act(() => vi.advanceTimersByTime(CONFIRM_WINDOW_MS + 1));
    expect(result.current.armed).toBeNull();
    let taken: unknown = "unset";
    act(() => {
      taken = result.current.take("sug-1");
    });
    expect(taken).toBeNull();
    act(() => result.current.arm({ action: "accept", target: "sug-1", prompt: "p" }));
    act(() => {
      taken = result.current.take("sug-2");
    });
    expect(taken).toBeNull(); // another item: dropped, not confirmed
    expect(result.current.armed).toBeNull();
  });
});

/** The panel of ex-1 showing `shown`, with a fake server and socket. */
async function openPanel(shown: Suggestion) {
  const state: { pending: PendingSuggestions } = { pending: pending(shown) };
  stubSignedInFetch((call) => {
    const path = call.url.split("?")[0];
    if (path === "/api/executions/ex-1") return jsonResponse(execution());
    if (path === "/api/executions/ex-1/coaching/suggestion") return jsonResponse(state.pending);
    if (path === "/api/executions/ex-1/coaching/stats") return jsonResponse(stats());
    if (path === "/api/metrics/workflows/wf-1") return jsonResponse(metrics());
    if (path === "/api/coaching/queue") return jsonResponse({ items: [], total: 0, page: 1, per_page: 50 });
    return errorResponse(404, "not_found", `no ${call.url} here`);
  });
  renderApp("/executions/ex-1/coach");
  const user = userEvent.setup();
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  lastSocket().respond = (event) =>
    event === "coaching_decision" ? { ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() } : { ok: true };
  await screen.findByRole("heading", { level: 2, name: /^Suggestion: / });
  return { user };
}

const decisionsSent = () => lastSocket().sent("coaching_decision") as Record<string, unknown>[];

describe("CoachingPanel: risky keys", () => {
  afterEach(() => {
    localStorage.removeItem(SHORTCUT_STORAGE_KEY);
    reloadShortcutMode();
  });

  it("a on an external call asks for Enter; nothing is sent until Enter", async () => {
    const { user } = await openPanel(payment());
    expect(screen.getByRole("button", { name: "Accept a then Enter" })).toBeEnabled();
    await user.keyboard("a");
    expect(screen.getByTestId("confirm-prompt")).toHaveTextContent(
      "Press Enter to accept Pay the supplier (http.request, amount 1,840; external).",
    );
    expect(screen.getByRole("button", { name: "Confirm accept Enter" })).toHaveAttribute("aria-keyshortcuts", "Enter");
    await user.keyboard("a"); // the same key again does not confirm
    expect(decisionsSent()).toHaveLength(0);
    await user.keyboard("{Enter}");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ suggestion_id: "sug-1", decision: "accept" });
  });

  it("Escape cancels, and another decision key drops the armed one", async () => {
    const { user } = await openPanel(payment({ risk: "destructive" }));
    await user.keyboard("s");
    expect(screen.getByTestId("confirm-prompt")).toHaveTextContent("Press Enter to skip Pay the supplier");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("confirm-prompt")).toBeNull();
    await user.keyboard("{Enter}");
    expect(decisionsSent()).toHaveLength(0);
    await user.keyboard("a");
    await user.keyboard("s"); // now skip is the armed one
    expect(screen.getByRole("button", { name: "Confirm skip Enter" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Accept a then Enter" })).toBeInTheDocument();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ decision: "skip" });
  });

  it("a click arms and a second click on the button confirms", async () => {
    const { user } = await openPanel(suggestion({ risk: "write", policy: { ...FLAGGED } }));
    await user.click(screen.getByRole("button", { name: "Accept a then Enter" }));
    expect(decisionsSent()).toHaveLength(0);
    expect(screen.getByTestId("confirm-prompt")).toHaveTextContent('flagged by the policy "Big payments"');
    await user.click(screen.getByRole("button", { name: "Confirm accept Enter" }));
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
  });

  it("Enter confirms even when focus was on another button (the armed one takes focus)", async () => {
    const { user } = await openPanel(payment());
    screen.getByRole("button", { name: "Shortcuts ?" }).focus();
    await user.keyboard("a");
    expect(screen.getByRole("button", { name: "Confirm accept Enter" })).toHaveFocus();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(screen.queryByRole("dialog")).toBeNull(); // the shortcut sheet did not open
  });

  it("a read call stays one key", async () => {
    const { user } = await openPanel(suggestion());
    await user.keyboard("a");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(screen.queryByTestId("confirm-prompt")).toBeNull();
  });

  it("in Alt mode Alt+a arms and Enter confirms", async () => {
    localStorage.setItem(SHORTCUT_STORAGE_KEY, "alt");
    reloadShortcutMode();
    const { user } = await openPanel(payment());
    await user.keyboard("a");
    expect(screen.queryByTestId("confirm-prompt")).toBeNull(); // a alone is nothing in Alt mode
    await user.keyboard("{Alt>}a{/Alt}");
    expect(screen.getByTestId("confirm-prompt")).toBeInTheDocument();
    await user.keyboard("{Enter}");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
  });
});
