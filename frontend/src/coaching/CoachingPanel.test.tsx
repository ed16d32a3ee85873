import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, headersOf, jsonResponse, type RecordedCall } from "../test/utils";
import { STALE_MESSAGE } from "./decisions";
import { REFRESH_QUIET_MS } from "./refresh";
import { execution, metrics, pending, queueItem, stats, suggestion } from "./testFixtures";
import type { CoachingExecution, PendingSuggestions, QueuePage } from "./types";

interface ServerState {
  pending: PendingSuggestions;
  execution: CoachingExecution;
  stats: ReturnType<typeof stats>;
  metrics: ReturnType<typeof metrics>;
  queue: QueuePage;
  onPost?: (call: RecordedCall) => Response | Promise<Response>;
  /** While true, reads of the suggestion never answer (so only a push can change it). */
  holdSuggestionReads?: boolean;
  /** When set, the next read of the suggestion answers with this (then it is unset). */
  nextSuggestionRead?: Promise<Response>;
}

function serverState(overrides: Partial<ServerState> = {}): ServerState {
  return {
    pending: pending(),
    execution: execution(),
    stats: stats(),
    metrics: metrics(),
    queue: { items: [], total: 0, page: 1, per_page: 50 },
    ...overrides,
  };
}

/** The app at the panel of ex-1, with a fake server answering from `state` (changes show on the next read). */
async function openPanel(state: ServerState = serverState()) {
  const { calls } = stubSignedInFetch((call) => {
    const path = call.url.split("?")[0];
    if (call.method === "POST") return state.onPost?.(call) ?? errorResponse(500, "unexpected", call.url);
    if (path === "/api/executions/ex-1") return jsonResponse(state.execution);
    if (path === "/api/executions/ex-1/coaching/suggestion") {
      const next = state.nextSuggestionRead;
      state.nextSuggestionRead = undefined;
      if (next) return next;
      return state.holdSuggestionReads ? new Promise<Response>(() => undefined) : jsonResponse(state.pending);
    }
    if (path === "/api/executions/ex-1/coaching/stats") return jsonResponse(state.stats);
    if (path === "/api/metrics/workflows/wf-1") return jsonResponse(state.metrics);
    if (path === "/api/coaching/queue") return jsonResponse(state.queue);
    return errorResponse(404, "not_found", `no ${call.url} here`);
  });
  renderApp("/executions/ex-1/coach");
  const user = userEvent.setup();
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  const socket = lastSocket();
  socket.respond = (event) => {
    if (event !== "coaching_decision") return { ok: true };
    state.stats = stats({ suggestions_made: 3, accepted: 2 });
    // as the server does: the answer's stats already count the next suggestion it opened
    return { ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: state.stats };
  };
  if (state.pending.suggestion) {
    await screen.findByRole("heading", { level: 2, name: /^Suggestion: / });
  }
  return { calls, user, socket };
}

/** Lets the reads planned after a burst of pushes (refresh.ts) and those after joining happen, if any. */
const settled = () => act(() => new Promise<void>((resolve) => setTimeout(resolve, REFRESH_QUIET_MS + 100)));

const decisionsSent = () => lastSocket().sent("coaching_decision") as Record<string, unknown>[];

describe("CoachingPanel", () => {
  it("says who decided when a colleague decides this run's suggestion, and nothing for one's own decision", async () => {
    const { socket } = await openPanel();
    act(() => socket.push("suggestion_decided", { execution_id: "ex-1", suggestion_id: "s-1", step_id: "fetch",
      decision: "accept", by: "grace@example.com", held_until: null }));
    expect(await screen.findByText("grace@example.com accepted the suggestion for step fetch.")).toBeInTheDocument();
    act(() => socket.push("suggestion_decided", { execution_id: "ex-1", suggestion_id: "s-2", step_id: "mail",
      decision: "reject", by: "ada@example.com", held_until: null }));
    act(() => socket.push("suggestion_decided", { execution_id: "ex-2", suggestion_id: "s-3", step_id: "other",
      decision: "skip", by: "grace@example.com", held_until: null }));
    expect(screen.queryByText(/ada@example.com rejected/)).not.toBeInTheDocument();
    expect(screen.queryByText(/step other/)).not.toBeInTheDocument();
  });

  it("says it was a check once a check suggestion is decided, and what a colleague's check came to", async () => {
    const { user, socket } = await openPanel();
    const message =
      "That was a check: to was set to 'wrong@example.com', a value reviewers corrected away before (the real suggestion has 'ops@example.com'). Nothing ran. Accepting it counts as a miss. Here is the real suggestion.";
    socket.respond = (event) =>
      event === "coaching_decision"
        ? { ok: true, check: { result: "miss", param: "to", shown: "wrong@example.com", real: "ops@example.com", message },
            execution: { execution_id: "ex-1", status: "waiting_decision" }, stats: stats() }
        : { ok: true };
    await user.keyboard("a");
    expect(await screen.findByText(message)).toBeInTheDocument();
    act(() => socket.push("suggestion_decided", { execution_id: "ex-1", suggestion_id: "s-9", step_id: "mail",
      decision: "reject", by: "grace@example.com", held_until: null, check: { result: "catch", param: "to" } }));
    expect(
      await screen.findByText("grace@example.com rejected a check of step mail (to changed; caught): nothing ran."),
    ).toBeInTheDocument();
  });

  it("shows the suggestion, its source pack, the steps and both kinds of stats", async () => {
    await openPanel(
      serverState({
        pending: pending(
          suggestion({
            source: "correction_pack:7",
            params: { message: "Hello Ada", count: 2 },
            definition_params: { message: "hi Ada", count: 2 },
          }),
        ),
      }),
    );

    // the workflow's name comes with its metrics, read beside the suggestion: it may answer after it
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Coaching: Customer greeting"));
    const card = screen.getByRole("region", { name: "Suggestion: Greet the customer" });
    expect(within(card).getByText("greet")).toBeInTheDocument();
    expect(within(card).getByText("echo")).toBeInTheDocument();
    expect(within(card).getByText("62% (medium)")).toBeInTheDocument();
    expect(within(card).getByText("Step 'Greet the customer' runs echo with these params.")).toBeInTheDocument();
    expect(within(card).getByTestId("suggested-params").textContent).toBe(
      JSON.stringify({ message: "Hello Ada", count: 2 }, null, 2),
    );
    expect(within(card).getByRole("link", { name: "the correction pack of step greet" })).toHaveAttribute(
      "href",
      "/correction-packs?pack=7",
    );
    expect(within(card).getByRole("region", { name: "What the correction pack changed" })).toHaveTextContent(
      /changed message: "hi Ada"\s*→\s*becomes "Hello Ada"/,
    );

    const steps = screen.getByRole("region", { name: "Steps" });
    const fetchStep = within(steps).getByRole("listitem", { name: "Fetch the order" });
    expect(fetchStep).toHaveTextContent("decision: accepted");
    expect(fetchStep.querySelector("pre")?.textContent).toBe(JSON.stringify({ order: 42 }, null, 2));
    expect(within(steps).getByRole("listitem", { name: "Greet the customer" })).toHaveAttribute("aria-current", "step");

    for (const name of ["Accept a", "Reject r", "Correct c", "Manual m", "Skip s", "Pause session p"]) {
      expect(screen.getByRole("button", { name })).toBeEnabled();
    }
    expect(screen.getByTestId("execution-stats")).toHaveTextContent("Accepted1");
    const workflow = screen.getByTestId("workflow-stats");
    expect(workflow).toHaveTextContent("LevelCoachingCoaching mode");
    expect(workflow).toHaveTextContent("Acceptance75%");
    expect(workflow).toHaveTextContent("Rolling acceptance78%");
    expect(screen.getByTestId("to-auto")).toHaveTextContent(
      "8 more decisions in the rolling window (AUTO needs 20; skips do not count).Rolling acceptance 78% of 85% needed.",
    );
    expect(lastSocket().sent("join_execution")).toContainEqual({ execution_id: "ex-1" });
  });

  it.each([
    ["a", "accept"],
    ["s", "skip"],
  ])("sends %s as %s over the socket at once, and shows the new stats", async (key, decision) => {
    const { user } = await openPanel();

    await user.keyboard(key);

    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ execution_id: "ex-1", suggestion_id: "sug-1", decision });
    expect(decisionsSent()[0].idempotency_key).toEqual(expect.any(String));
    await waitFor(() => expect(screen.getByTestId("execution-stats")).toHaveTextContent("Suggestions3Accepted2"));
    expect(screen.getByTestId("announcer")).toHaveTextContent(/Greet the customer\.$/);
  });

  it("sends the decision within the key press itself, and drops a second press made before the answer", async () => {
    const { socket } = await openPanel();
    let answer: (value: unknown) => void = () => undefined;
    socket.respond = (event) =>
      event === "coaching_decision" ? new Promise((resolve) => (answer = resolve)) : { ok: true };

    // two presses in a row, before React has drawn the "sending" state of the first
    fireEvent.keyDown(document.body, { key: "a" });
    expect(decisionsSent()).toHaveLength(1); // on the wire before anything else runs
    fireEvent.keyDown(document.body, { key: "a" });
    expect(decisionsSent()).toHaveLength(1);
    expect(await screen.findByText("Sending the decision…")).toBeInTheDocument();

    await act(async () => answer({ ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() }));
    await waitFor(() => expect(screen.getByTestId("announcer")).toHaveTextContent("Accepted Greet the customer."));
    expect(decisionsSent()).toHaveLength(1);
  });


  it("keeps a decision on the next suggestion made before the previous answer arrived, and sends it once that answer is in", async () => {
    const { socket } = await openPanel();
    const answers: ((value: unknown) => void)[] = [];
    socket.respond = (event) =>
      event === "coaching_decision" ? new Promise((resolve) => answers.push(resolve)) : { ok: true };

    fireEvent.keyDown(document.body, { key: "a" });
    expect(decisionsSent()).toHaveLength(1);
    // the server pushes the next suggestion before it answers the decision: the operator accepts it at once
    act(() => {
      lastSocket().push("coaching_suggestion", suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" }));
    });
    await screen.findByRole("heading", { level: 2, name: "Suggestion: Close the ticket" });
    fireEvent.keyDown(document.body, { key: "a" });
    fireEvent.keyDown(document.body, { key: "a" }); // a repeat: still one decision for it
    expect(decisionsSent()).toHaveLength(1); // one decision on the wire at a time

    await act(async () => answers[0]({ ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() }));
    await waitFor(() => expect(decisionsSent()).toHaveLength(2));
    expect(decisionsSent()[1]).toMatchObject({ suggestion_id: "sug-2", decision: "accept" });
    await act(async () => answers[1]({ ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() }));
    await waitFor(() => expect(screen.getByTestId("announcer")).toHaveTextContent("Accepted Close the ticket."));
    expect(decisionsSent()).toHaveLength(2);
  });
  it("a dialog opened on the next suggestion before the previous answer arrived stays open when that answer comes", async () => {
    const { socket, user } = await openPanel();
    const answers: ((value: unknown) => void)[] = [];
    socket.respond = (event) =>
      event === "coaching_decision" ? new Promise((resolve) => answers.push(resolve)) : { ok: true };

    await user.keyboard("m");
    const manual = screen.getByRole("dialog", { name: "Done by hand: Greet the customer" });
    await user.type(within(manual).getByLabelText("Output of the step"), "done");
    await user.click(within(manual).getByRole("radio", { name: "Plain text" }));
    await user.click(within(manual).getByRole("button", { name: "Record manual result" }));
    expect(decisionsSent()).toHaveLength(1);
    // the next suggestion is pushed before the answer: the manual dialog goes with the suggestion it decided, and
    // the operator's r opens the reject dialog of the new one
    act(() => {
      lastSocket().push("coaching_suggestion", suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" }));
    });
    await screen.findByRole("heading", { level: 2, name: "Suggestion: Close the ticket" });
    expect(screen.queryByRole("dialog", { name: /Done by hand/ })).not.toBeInTheDocument();
    await user.keyboard("r");
    const reject = screen.getByRole("dialog", { name: "Reject step Close the ticket" });
    expect(within(reject).getByLabelText("Why is this suggestion wrong?")).toHaveFocus();

    await act(async () => answers[0]({ ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() }));
    await waitFor(() => expect(screen.getByTestId("announcer")).toHaveTextContent("Recorded"));
    expect(screen.getByRole("dialog", { name: "Reject step Close the ticket" })).toBeInTheDocument();
    expect(screen.queryByText(STALE_MESSAGE)).not.toBeInTheDocument();
  });

  it("takes back 'no suggestion to decide' as soon as the next suggestion is shown", async () => {
    await openPanel(
      serverState({
        pending: pending(null, { status: "running" }),
        execution: execution({ status: "running" }),
      }),
    );
    await screen.findByRole("heading", { level: 1 });
    fireEvent.keyDown(document.body, { key: "a" }); // a moment too early: the tool still runs
    expect(await screen.findByText("There is no suggestion to decide.")).toBeInTheDocument();
    act(() => {
      lastSocket().push("coaching_suggestion", suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" }));
    });
    await screen.findByRole("heading", { level: 2, name: "Suggestion: Close the ticket" });
    expect(screen.queryByText("There is no suggestion to decide.")).not.toBeInTheDocument();
    expect(decisionsSent()).toHaveLength(0);
  });

  it("asks for feedback before rejecting (r), and refuses an empty one", async () => {
    const { user } = await openPanel();

    await user.keyboard("r");
    const dialog = screen.getByRole("dialog", { name: "Reject step Greet the customer" });
    const field = within(dialog).getByLabelText("Why is this suggestion wrong?");
    expect(field).toHaveFocus();
    expect(decisionsSent()).toHaveLength(0);

    await user.click(within(dialog).getByRole("button", { name: "Reject with feedback" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Write what is wrong");
    expect(decisionsSent()).toHaveLength(0);

    await user.type(field, "wrong customer name");
    await user.keyboard("{Control>}{Enter}{/Control}");

    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ decision: "reject", feedback: "wrong customer name" });
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  });

  it("asks for the output of a manual step (m), as JSON or as text", async () => {
    const { user } = await openPanel();

    await user.keyboard("m");
    const dialog = screen.getByRole("dialog", { name: "Done by hand: Greet the customer" });
    const field = within(dialog).getByLabelText("Output of the step");
    expect(field).toHaveFocus();
    await user.type(field, "{{broken");
    await user.click(within(dialog).getByRole("button", { name: "Record manual result" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Not valid JSON");
    expect(decisionsSent()).toHaveLength(0);

    await user.click(within(dialog).getByRole("radio", { name: "Plain text" }));
    await user.click(within(dialog).getByRole("button", { name: "Record manual result" }));
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ decision: "manual", manual_output: "{broken" });
  });

  it("sends valid JSON as the manual output's value", async () => {
    const { user } = await openPanel();
    await user.keyboard("m");
    await user.type(screen.getByLabelText("Output of the step"), '{{"sent": true}');
    await user.keyboard("{Control>}{Enter}{/Control}");
    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({ decision: "manual", manual_output: { sent: true } });
  });

  it("opens the correction editor with c and sends the corrected params", async () => {
    const { user } = await openPanel();

    await user.keyboard("c");
    const dialog = screen.getByRole("dialog", { name: "Correct step Greet the customer" });
    const message = await within(dialog).findByLabelText(/^message/, {}, { timeout: 5000 });
    await waitFor(() => expect(message).toHaveFocus());
    await user.clear(message);
    await user.type(message, "hello Ada");
    await user.click(within(dialog).getByRole("button", { name: /Send correction/ }));

    await waitFor(() => expect(decisionsSent()).toHaveLength(1));
    expect(decisionsSent()[0]).toMatchObject({
      decision: "correct",
      correction: { message: "hello Ada", count: 2 },
    });
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    // focus goes back to where it was before the editor opened (the page, here) — not into nowhere
    expect(document.activeElement).not.toBeNull();
  });

  it("shows the server's 422 details on the editor's fields and keeps it open", async () => {
    const { user, socket } = await openPanel();
    socket.respond = (event) =>
      event === "coaching_decision"
        ? {
            ok: false,
            error: {
              code: "validation_failed",
              message: "the correction does not fit tool 'echo'",
              details: { "correction.message": ["'hello' is too short"] },
            },
          }
        : { ok: true };

    await user.keyboard("c");
    const dialog = screen.getByRole("dialog", { name: "Correct step Greet the customer" });
    const message = await within(dialog).findByLabelText(/^message/, {}, { timeout: 5000 });
    await user.clear(message);
    await user.type(message, "hello");
    await user.click(within(dialog).getByRole("button", { name: /Send correction/ }));

    const summary = await within(dialog).findByText("The server refused the correction:");
    expect(summary.closest("[role='alert']")).toHaveTextContent("message: 'hello' is too short");
    const group = message.closest(".form-group") as HTMLElement;
    expect(within(group).getByText("'hello' is too short")).toBeInTheDocument();
    expect(screen.getByRole("dialog")).toBeInTheDocument();
  });

  it("shortcuts are off while typing in a field and while a dialog is open", async () => {
    const { user } = await openPanel();
    const outside = document.createElement("textarea");
    outside.setAttribute("aria-label", "notes");
    document.body.appendChild(outside);

    await user.type(outside, "ascrm");
    await user.selectOptions(screen.getByLabelText("Workspace"), "1");
    screen.getByLabelText("Workspace").focus();
    await user.keyboard("a");
    outside.remove();

    await user.click(screen.getByRole("button", { name: "Shortcuts ?" }));
    const sheet = screen.getByRole("dialog", { name: "Keyboard shortcuts" });
    expect(within(sheet).getByRole("rowheader", { name: "Accept" })).toBeInTheDocument();
    await user.keyboard("as");
    expect(screen.queryByRole("dialog", { name: /Reject/ })).not.toBeInTheDocument();
    expect(decisionsSent()).toHaveLength(0);

    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Shortcuts ?" })).toHaveFocus();
    await user.keyboard("?");
    expect(screen.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeInTheDocument();
  });

  it("keeps Tab inside an open dialog", async () => {
    const { user } = await openPanel();
    await user.keyboard("r");
    const dialog = screen.getByRole("dialog");
    for (let i = 0; i < 6; i++) {
      await user.tab();
      expect(dialog.contains(document.activeElement)).toBe(true);
    }
    await user.tab({ shift: true });
    expect(dialog.contains(document.activeElement)).toBe(true);
  });

  it("says clearly when the suggestion was already decided elsewhere (409), and shows the current one", async () => {
    const state = serverState();
    const { user, socket, calls } = await openPanel(state);
    socket.respond = (event) => {
      if (event !== "coaching_decision") return { ok: true };
      // someone else decided first: the server now has the next suggestion
      state.pending = pending(suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" }));
      return {
        ok: false,
        error: { code: "conflict", message: "suggestion is already decided", details: { suggestion_status: "decided" } },
      };
    };
    const readsBefore = calls.filter((c) => c.url.endsWith("/coaching/suggestion")).length;

    await user.keyboard("a");

    expect(await screen.findByText(STALE_MESSAGE)).toBeInTheDocument();
    expect(screen.getByText(STALE_MESSAGE).closest("[role='alert']")).not.toBeNull();
    expect(await screen.findByRole("heading", { name: "Suggestion: Close the ticket" })).toBeInTheDocument();
    expect(calls.filter((c) => c.url.endsWith("/coaching/suggestion")).length).toBeGreaterThan(readsBefore);
  });

  it("replaces the suggestion at once when another one is pushed for this execution", async () => {
    const state = serverState();
    const { user } = await openPanel(state);
    await user.keyboard("r"); // a dialog open on the old suggestion closes: its decision would be stale
    state.holdSuggestionReads = true;

    // (Query notifies on a timer: `await act` lets it render.)
    await act(async () => {
      lastSocket().push("coaching_suggestion", suggestion({ suggestion_id: "sug-9", execution_id: "ex-other", step_name: "Elsewhere" }));
    });
    expect(screen.getByRole("heading", { level: 2, name: "Suggestion: Greet the customer" })).toBeInTheDocument();

    await act(async () => {
      lastSocket().push("coaching_suggestion", suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" }));
    });
    expect(await screen.findByRole("heading", { level: 2, name: "Suggestion: Close the ticket" })).toBeInTheDocument();
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    // the notice and the announcement may come a render after the heading (a loaded machine shows it)
    expect(await screen.findByText(STALE_MESSAGE)).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByTestId("announcer")).toHaveTextContent("New suggestion: Close the ticket, tool echo."),
    );
  });

  it("keeps a pushed suggestion when a read begun before it answers with what was pending then", async () => {
    const state = serverState();
    const { calls, socket } = await openPanel(state);
    await settled();
    const reads = () => calls.filter((c) => c.url === "/api/executions/ex-1/coaching/suggestion").length;
    let answerStale: (response: Response) => void = () => undefined;
    state.nextSuggestionRead = new Promise<Response>((resolve) => {
      answerStale = resolve;
    });
    const stale = JSON.parse(JSON.stringify(state.pending)) as PendingSuggestions;
    const before = reads();
    // a rejoin whose answer says the execution moved on: the suggestion is read again (that read hangs for now)
    const decide = socket.respond;
    socket.respond = (event, data) =>
      event === "join_execution"
        ? { ok: true, pending: 1, execution: { execution_id: "ex-1", status: "waiting_decision", step_id: null,
                                               progress: { done: 2, total: 3, percent: 66.7 } } }
        : decide(event, data);
    await act(async () => socket.drop());
    await act(async () => {
      socket.connect();
    });
    await waitFor(() => expect(reads()).toBe(before + 1));

    // meanwhile the next suggestion is committed and pushed; the read begun before it answers afterwards
    const next = suggestion({ suggestion_id: "sug-2", step_id: "close", step_name: "Close the ticket" });
    state.pending = { ...state.pending, suggestion: next, suggestions: [next] };
    await act(async () => {
      socket.push("coaching_suggestion", next);
    });
    await act(async () => {
      answerStale(jsonResponse(stale));
    });
    await settled();
    expect(screen.getByRole("heading", { level: 2, name: "Suggestion: Close the ticket" })).toBeInTheDocument();
    expect(reads()).toBeGreaterThan(before + 1); // read again after the push
  });

  it("shows the progress an execution_update carries at once, before the steps are read again", async () => {
    await openPanel(serverState());
    expect(screen.getByLabelText("Execution progress").parentElement).toHaveTextContent("1 / 3 steps (33%)");
    await act(async () => {
      lastSocket().push("execution_update", { execution_id: "ex-other", status: "running",
                                             progress: { done: 9, total: 9, percent: 100 } });
      lastSocket().push("execution_update", { execution_id: "ex-1", status: "waiting_decision", step_id: "greet",
                                             progress: { done: 2, total: 3, percent: 66.7 } });
    });
    await waitFor(() =>
      expect(screen.getByLabelText("Execution progress").parentElement).toHaveTextContent("2 / 3 steps (67%)"),
    );
  });

  it("shows the steps an execution_update carries in the timeline without reading the execution again", async () => {
    const state = serverState();
    const { calls } = await openPanel(state);
    const executionReads = () => calls.filter((c) => c.url === "/api/executions/ex-1").length;
    await settled();
    const before = executionReads();

    await act(async () => {
      lastSocket().push("execution_update", {
        execution_id: "ex-1", status: "waiting_decision", step_id: "close",
        progress: { done: 2, total: 3, percent: 66.7 },
        gate: { kind: "decision", step_id: "close", suggestion_id: "sug-2" },
        steps: [
          { step_id: "greet", status: "succeeded", output: { message: "pushed hello" }, decision: "accept", error: null },
          { step_id: "close", status: "waiting", output: null, decision: null, error: null },
        ],
      });
    });
    const greet = document.querySelector("[data-step-id='greet']") as HTMLElement;
    await waitFor(() => expect(greet).toHaveTextContent("pushed hello"));
    expect(greet).toHaveTextContent("decision: accepted");
    expect(greet).toHaveTextContent("Greet the customer"); // what the definition says stays as read
    expect(screen.getByLabelText("Execution progress").parentElement).toHaveTextContent("2 / 3 steps (67%)");
    await settled();
    expect(executionReads()).toBe(before);
  });

  it("reads the execution again when a push does not add up to the progress (one was missed) or says nothing of the steps", async () => {
    const state = serverState();
    const { calls } = await openPanel(state);
    const executionReads = () => calls.filter((c) => c.url === "/api/executions/ex-1").length;
    await settled();
    const before = executionReads();
    state.execution = execution({
      progress: { done: 3, total: 3, percent: 100 },
      steps: execution().steps.map((step) => ({ ...step, status: "succeeded", output: { read: step.step_id } })),
    });

    await act(async () => {
      // greet's push was missed: close's alone leaves 2 steps done where the server counts 3
      lastSocket().push("execution_update", {
        execution_id: "ex-1", status: "running", step_id: "close", progress: { done: 3, total: 3, percent: 100 },
        gate: null, steps: [{ step_id: "close", status: "succeeded", output: null, decision: "accept", error: null }],
      });
    });
    await waitFor(() => expect(executionReads()).toBe(before + 1));
    await waitFor(() => expect(document.querySelector("[data-step-id='greet']")).toHaveTextContent('"read": "greet"'));

    await act(async () => {
      // from a server that does not push the steps: read them
      lastSocket().push("execution_update", { execution_id: "ex-1", status: "running", step_id: "close",
                                             progress: { done: 3, total: 3, percent: 100 } });
    });
    await waitFor(() => expect(executionReads()).toBe(before + 2));
  });

  it("back in the room after the connection dropped, reads the execution and its suggestion again when the join says it moved on", async () => {
    const { calls, socket } = await openPanel(serverState());
    const reads = (path: string) => calls.filter((c) => c.url === path).length;
    const answerJoin = (done: number) => {
      const decide = socket.respond;
      socket.respond = (event, data) =>
        event === "join_execution"
          ? { ok: true, pending: 1, execution: { execution_id: "ex-1", status: "waiting_decision", step_id: null,
                                                 progress: { done, total: 3, percent: 33.3 } } }
          : decide(event, data);
    };
    const rejoin = async () => {
      await act(async () => socket.drop());
      await act(async () => {
        socket.connect();
      });
      await settled();
    };
    await settled();
    const executionBefore = reads("/api/executions/ex-1");
    const pendingBefore = reads("/api/executions/ex-1/coaching/suggestion");

    answerJoin(1); // where the page's copy is: nothing was missed
    await rejoin();
    expect(socket.sent("join_execution").length).toBeGreaterThanOrEqual(2);
    expect(reads("/api/executions/ex-1")).toBe(executionBefore);

    answerJoin(2); // a decision was made meanwhile
    await rejoin();
    await waitFor(() => expect(reads("/api/executions/ex-1")).toBeGreaterThan(executionBefore));
    await waitFor(() => expect(reads("/api/executions/ex-1/coaching/suggestion")).toBeGreaterThan(pendingBefore));
  });

  it("reads again after joining when only the gate moved (a decision held for its undo window)", async () => {
    const { calls, socket } = await openPanel(serverState());
    const reads = () => calls.filter((c) => c.url === "/api/executions/ex-1").length;
    await settled();
    const before = reads();
    const decide = socket.respond;
    socket.respond = (event, data) =>
      event === "join_execution"
        ? { ok: true, pending: 0, execution: { execution_id: "ex-1", status: "waiting_decision", step_id: null,
                                               progress: { done: 1, total: 3, percent: 33.3 },
                                               gate: { kind: "held", step_id: "send", suggestion_id: "sug-1" } } }
        : decide(event, data);
    await act(async () => socket.drop());
    await act(async () => {
      socket.connect();
    });
    await waitFor(() => expect(reads()).toBeGreaterThan(before));
  });

  it("a decision sent over REST while the connection was coming up reads what it changed, though online by its answer", async () => {
    let answer: (response: Response) => void = () => undefined;
    const state = serverState({ onPost: () => new Promise<Response>((resolve) => { answer = resolve; }) });
    const { user, calls, socket } = await openPanel(state);
    await settled();
    act(() => socket.drop());
    await screen.findByText(/Live updates are paused/);
    await user.keyboard("s");
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    await act(async () => {
      socket.connect(); // back online before the answer: the pushes of this decision may have gone before the join
    });
    const before = calls.filter((c) => c.url === "/api/executions/ex-1").length;
    await act(async () => answer(jsonResponse({ ok: true, execution: { execution_id: "ex-1", status: "waiting_decision" },
                                                stats: stats() })));
    await waitFor(() => expect(calls.filter((c) => c.url === "/api/executions/ex-1").length).toBeGreaterThan(before));
  });

  it("updates the stats from coaching_stats and shows the workflow's snapshot from metrics_update without a re-read", async () => {
    const state = serverState();
    const { calls } = await openPanel(state);
    await screen.findByTestId("workflow-stats");

    await act(async () => {
      lastSocket().push("coaching_stats", { execution_id: "ex-other", ...stats({ accepted: 40 }) });
      lastSocket().push("coaching_stats", { execution_id: "ex-1", ...stats({ accepted: 3, rejected: 1 }) });
    });
    await waitFor(() => expect(screen.getByTestId("execution-stats")).toHaveTextContent("Accepted3"));
    expect(screen.getByTestId("execution-stats")).toHaveTextContent("Rejected1");

    const snapshot = metrics({ level: "AUTO", auto_ready: true, decisions: 25, rolling_acceptance_rate: 0.9 });
    const metricReads = () => calls.filter((c) => c.url === "/api/metrics/workflows/wf-1").length;
    const before = metricReads();
    act(() => lastSocket().push("metrics_update", { ...snapshot, workflow_id: "wf-other", level: "OBSERVATION" }));
    act(() => lastSocket().push("metrics_update", { ...snapshot, workflow_id: "wf-1" }));
    await waitFor(() => expect(screen.getByTestId("workflow-stats")).toHaveTextContent("LevelAUTO-readyCoaching mode"));
    expect(metricReads()).toBe(before);
    expect(screen.getByTestId("to-auto")).toHaveTextContent("Ready for AUTO: a lead can promote it.");
  });

  it("decides over REST, with an Idempotency-Key, while the socket is offline", async () => {
    const state = serverState({
      onPost: () => jsonResponse({ ok: true, execution: { execution_id: "ex-1", status: "running" }, stats: stats() }),
    });
    const { user, calls } = await openPanel(state);
    act(() => lastSocket().drop());
    expect(await screen.findByText(/Live updates are paused/)).toBeInTheDocument();

    await user.keyboard("s");

    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    const post = calls.find((c) => c.method === "POST")!;
    expect(post.url).toBe("/api/executions/ex-1/coaching/decision");
    expect(post.body).toEqual({ suggestion_id: "sug-1", decision: "skip" });
    expect(headersOf(post)["Idempotency-Key"]).toEqual(expect.any(String));
    expect(decisionsSent()).toHaveLength(0);
  });

  it("pauses with p; a paused session takes no decisions until resumed", async () => {
    const state = serverState({
      onPost: (call) => {
        if (call.url.endsWith("/coaching/pause")) {
          state.pending = pending(suggestion(), { status: "paused", paused: true });
          return jsonResponse(state.pending);
        }
        return errorResponse(500, "unexpected", call.url);
      },
    });
    const { user, calls } = await openPanel(state);

    await user.keyboard("p");

    await waitFor(() => expect(screen.getByRole("button", { name: "Resume session p" })).toBeInTheDocument());
    expect(calls.some((c) => c.method === "POST" && c.url === "/api/executions/ex-1/coaching/pause")).toBe(true);
    expect(screen.getByRole("button", { name: "Accept a" })).toBeDisabled();
    expect(screen.getByText(/Decisions are off until you resume/)).toBeInTheDocument();
    await user.keyboard("a");
    expect(await screen.findByText("The session is paused. Press p to resume it.")).toBeInTheDocument();
    expect(decisionsSent()).toHaveLength(0);
  });

  it("after the last step shows the finished state; n opens the next queue item", async () => {
    const { user } = await openPanel(
      serverState({
        pending: pending(null),
        execution: execution({ status: "completed", progress: { done: 3, total: 3, percent: 100 } }),
        queue: {
          items: [queueItem({ execution_id: "ex-1" }), queueItem({ suggestion_id: "sug-5", execution_id: "ex-5" })],
          total: 2,
          page: 1,
          per_page: 50,
        },
      }),
    );

    expect(await screen.findByRole("heading", { level: 2, name: /Execution completed/ })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Back to the queue" })).toHaveAttribute("href", "/queue");
    expect(await screen.findByRole("button", { name: "Next in the queue n" })).toBeInTheDocument();

    await user.keyboard("n");
    await waitFor(() => expect(window.location.pathname).toBe("/executions/ex-5/coach"));
  });
});
