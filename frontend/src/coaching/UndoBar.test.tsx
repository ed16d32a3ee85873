import { act, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, jsonResponse } from "../test/utils";
import { SHORTCUT_STORAGE_KEY, reloadShortcutMode } from "./shortcutPreference";
import { execution, metrics, pending, stats, suggestion } from "./testFixtures";
import { secondsLeft } from "./UndoBar";
import type { Suggestion } from "./types";

const wipe = suggestion({ step_id: "greet", step_name: "Greet the customer", tool: "shell.run", risk: "destructive" });
const HELD_UNTIL = () => new Date(Date.now() + 8_000).toISOString();
const heldGate = (deadline: string) => ({
  kind: "held" as const,
  step_id: "greet",
  suggestion_id: wipe.suggestion_id,
  decision: "accept" as const,
  operator: "ann@example.com",
  deadline,
  timeout_s: 10,
  reopen: { kind: "decision" as const, step_id: "greet", suggestion_id: wipe.suggestion_id },
});

/** The panel of ex-1 with a fake server: the suggestion `shown`, or (shown null) the accept on it held. */
async function openPanel(shown: Suggestion | null, deadline = HELD_UNTIL()) {
  const server = { held: shown === null };
  stubSignedInFetch((call) => {
    const path = call.url.split("?")[0];
    if (path === "/api/executions/ex-1") return jsonResponse(execution(server.held ? { gate: heldGate(deadline) } : {}));
    if (path === "/api/executions/ex-1/coaching/suggestion") return jsonResponse(pending(server.held ? null : shown));
    if (path === "/api/executions/ex-1/coaching/stats") return jsonResponse(stats());
    if (path === "/api/metrics/workflows/wf-1") return jsonResponse(metrics());
    if (path === "/api/coaching/queue") return jsonResponse({ items: [], total: 0, page: 1, per_page: 50 });
    return errorResponse(404, "not_found", `no ${call.url} here`);
  });
  renderApp("/executions/ex-1/coach");
  const user = userEvent.setup();
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  lastSocket().respond = (event) => {
    if (event !== "coaching_undo") return { ok: true };
    server.held = false;
    return {
          ok: true,
          suggestion: wipe,
      execution: { execution_id: "ex-1", status: "waiting_decision", step_id: "greet", gate: heldGate(deadline).reopen },
    };
  };
  return { user, server };
}

const undosSent = () => lastSocket().sent("coaching_undo") as Record<string, unknown>[];

describe("secondsLeft", () => {
  it("counts whole seconds down to zero, never below", () => {
    const now = Date.parse("2026-11-28T01:00:00Z");
    expect(secondsLeft("2026-11-28T01:00:09.200Z", now)).toBe(10);
    expect(secondsLeft("2026-11-28T00:59:59Z", now)).toBe(0);
    expect(secondsLeft(null, now)).toBe(0);
  });
});

describe("CoachingPanel: undo", () => {
  afterEach(() => {
    localStorage.removeItem(SHORTCUT_STORAGE_KEY);
    reloadShortcutMode();
  });

  it("shows the held decision with its countdown, and z takes it back: the suggestion is shown again", async () => {
    const { user } = await openPanel(null);
    const bar = await screen.findByTestId("undo-bar");
    expect(bar).toHaveTextContent("Accepted Greet the customer by ann@example.com.");
    expect(bar).toHaveTextContent(/It acts in [89] s/);
    await user.keyboard("z");
    await waitFor(() => expect(undosSent()).toEqual([{ execution_id: "ex-1", suggestion_id: wipe.suggestion_id }]));
    expect(await screen.findByRole("heading", { level: 2, name: /^Suggestion: / })).toBeInTheDocument();
    expect(screen.queryByTestId("undo-bar")).toBeNull();
    expect(screen.getByTestId("announcer")).toHaveTextContent("Taken back: Greet the customer waits for your decision again.");
  });

  it("z pressed before the accept's own answer is in waits for it, so that answer cannot take the suggestion away again", async () => {
    const { user, server } = await openPanel(wipe);
    await screen.findByRole("heading", { level: 2, name: "Suggestion: Greet the customer" });
    const undoAnswer = lastSocket().respond;
    let answerDecision: (value: unknown) => void = () => undefined;
    lastSocket().respond = (event, payload) =>
      event === "coaching_decision" ? new Promise((resolve) => (answerDecision = resolve)) : undoAnswer(event, payload);
    await user.keyboard("a");
    await user.keyboard("{Enter}"); // a destructive call: confirmed
    await waitFor(() => expect(lastSocket().sent("coaching_decision")).toHaveLength(1));
    // the accept is held; the page reads that (here after the connection came back) before the decision's answer
    server.held = true;
    await act(async () => lastSocket().drop());
    await act(async () => {
      lastSocket().connect();
    });
    await screen.findByTestId("undo-bar");
    await user.keyboard("z");
    expect(undosSent()).toHaveLength(0); // not before the decision's answer

    await act(async () => answerDecision({ ok: true, execution: { execution_id: "ex-1", status: "waiting_decision" }, stats: stats(), decision: { held_until: HELD_UNTIL() } }));
    await waitFor(() => expect(undosSent()).toHaveLength(1));
    expect(await screen.findByRole("heading", { level: 2, name: "Suggestion: Greet the customer" })).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId("undo-bar")).toBeNull());
  });

  it("Ctrl+Z and the button take it back too; a 409 says why", async () => {
    const { user } = await openPanel(null);
    await screen.findByTestId("undo-bar");
    lastSocket().respond = () => ({
      ok: false,
      error: { code: "step_started", message: "the step already started: its decision can no longer be taken back" },
    });
    await user.keyboard("{Control>}z{/Control}");
    await waitFor(() => expect(undosSent()).toHaveLength(1));
    expect(await screen.findByRole("alert")).toHaveTextContent("the step already started");
    await user.click(screen.getByRole("button", { name: /Undo/ }));
    await waitFor(() => expect(undosSent()).toHaveLength(2));
  });

  it("the button is off once the window is over, and z does nothing without a held decision", async () => {
    const { user, server } = await openPanel(null, new Date(Date.now() - 1_000).toISOString());
    expect(await screen.findByTestId("undo-bar")).toHaveTextContent("It acts now.");
    expect(screen.getByRole("button", { name: /Undo/ })).toBeDisabled();
    server.held = false; // released: the step runs
    act(() => lastSocket().push("execution_update", { execution_id: "ex-1", status: "running", gate: null }));
    await waitFor(() => expect(screen.queryByTestId("undo-bar")).toBeNull());
    await user.keyboard("z");
    expect(undosSent()).toHaveLength(0);
  });
});
