import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { jsonResponse } from "../test/utils";
import { apiQuery, approvalMatches, filtersFromParams, keyVariables, paramsOf, shows } from "./queueFilters";
import { setShortcutMode } from "./shortcutPreference";
import { queueItem } from "./testFixtures";
import type { Question, QueueItem } from "./types";

const question: Question = {
  execution_id: "ex-q",
  workflow_id: "wf-intake",
  workflow_name: "Intake",
  step_id: "ask",
  step_name: "Which account",
  kind: "human_input",
  question: "Which account should be charged?",
  paused_at: new Date().toISOString(),
  deadline: null,
  on_timeout: null,
  variables: { ticket: "T-42" },
  execution_mode: "normal",
  waiting_since: new Date().toISOString(),
};

const acme = queueItem({ suggestion_id: "s-1", execution_id: "ex-1", workflow_name: "Refund", variables: { customer: "ACME", amount: 120 } });
const globex = queueItem({ suggestion_id: "s-2", execution_id: "ex-2", workflow_name: "Refund", variables: { customer: "Globex" } });

const page = <T,>(items: T[]) => ({ items, total: items.length, page: 1, per_page: 50 });

async function openQueue(route = "/queue", { suggestions = [acme, globex] as QueueItem[], questions = [question] } = {}) {
  const { calls } = stubSignedInFetch((call) => {
    if (call.url.startsWith("/api/coaching/queue")) return jsonResponse(page(suggestions));
    if (call.url.startsWith("/api/coaching/questions")) return jsonResponse(page(questions));
    if (call.url.startsWith("/api/executions/ex-q/steps/ask/answer")) return jsonResponse({ execution_id: "ex-q" });
    if (call.url.startsWith("/api/workflows")) {
      return jsonResponse(page([{ id: "wf-refund", name: "Refund", version: 1, level: "COACHING", mode: "coaching", steps: [{ id: "pay", name: "Pay back" }] }]));
    }
    return jsonResponse(page([]));
  });
  renderApp(route);
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  return { calls, user: userEvent.setup() };
}

afterEach(() => setShortcutMode("single"));

describe("queue filters", () => {
  it("reads the address, writes it back and asks the API only what it filters", () => {
    const filters = filtersFromParams(new URLSearchParams("workflow=wf-1&step=pay&kind=spot_check&age=older:3600&q=acme&order=oldest"));
    expect(apiQuery(filters)).toBe("workflow_id=wf-1&step_id=pay&kind=spot_check&min_age_s=3600&q=acme&order=oldest");
    expect(paramsOf(filters)).toEqual({ workflow: "wf-1", step: "pay", kind: "spot_check", age: "older:3600", q: "acme", order: "oldest" });
    expect(apiQuery(filtersFromParams(new URLSearchParams("age=newer:300&kind=approval")))).toBe("max_age_s=300");
    expect(apiQuery(filtersFromParams(new URLSearchParams("age=bogus")))).toBe("");
    const approvalsOnly = filtersFromParams(new URLSearchParams("kind=approval"));
    expect([shows(approvalsOnly, "approval"), shows(approvalsOnly, "question"), shows(approvalsOnly, "suggestion")]).toEqual([true, false, false]);
  });

  it("filters approvals on the client and cuts long variables short", () => {
    const approval = { execution_id: "ex", step_id: "pay", message: "Pay ACME", tool: "http.request", created_at: new Date().toISOString() };
    const none = filtersFromParams(new URLSearchParams());
    expect(approvalMatches(approval, { ...none, q: "acme" }, Date.now())).toBe(true);
    expect(approvalMatches(approval, { ...none, q: "globex" }, Date.now())).toBe(false);
    expect(approvalMatches(approval, { ...none, age: "older:3600" }, Date.now())).toBe(false);
    expect(approvalMatches(approval, { ...none, workflow: "wf-1" }, Date.now())).toBe(false);
    expect(keyVariables({ a: "x".repeat(60), b: 2, c: null, d: [1], e: "more" })).toBe(`a=${"x".repeat(39)}… · b=2 · d=[1]`);
  });
});

describe("the queue as a work list", () => {
  it("shows the questions first, the run's variables on each row and the count in the tab title", async () => {
    await openQueue();
    const questions = await screen.findByRole("listbox", { name: "Questions waiting for an answer" });
    expect(within(questions).getByRole("option")).toHaveTextContent("Which account should be charged?");
    expect(within(questions).getByRole("option")).toHaveTextContent("ticket=T-42");
    const suggestions = await screen.findByRole("listbox", { name: "Pending suggestions" });
    expect(within(suggestions).getAllByRole("option")[0]).toHaveTextContent("customer=ACME · amount=120");
    await waitFor(() => expect(document.title).toBe("(3) Queue · Coach"));
  });

  it("sends the filters to the API and keeps them in the address", async () => {
    const { calls, user } = await openQueue();
    await screen.findByRole("listbox", { name: "Pending suggestions" });
    await user.selectOptions(screen.getByLabelText("Order"), "oldest");
    await waitFor(() => expect(calls.some((c) => c.url.includes("/api/coaching/queue?") && c.url.includes("order=oldest"))).toBe(true));
    await user.type(screen.getByLabelText("Search"), "acme");
    await waitFor(() => expect(calls.some((c) => c.url.includes("/api/coaching/questions?") && c.url.includes("q=acme"))).toBe(true));
    await user.selectOptions(screen.getByLabelText("Kind"), "approval");
    expect(screen.queryByRole("listbox", { name: "Pending suggestions" })).not.toBeInTheDocument();
    expect(screen.queryByRole("listbox", { name: "Questions waiting for an answer" })).not.toBeInTheDocument();
  });

  it("answers a question from the keyboard: Enter opens the answer, Enter sends it", async () => {
    const { calls, user } = await openQueue();
    await screen.findByRole("listbox", { name: "Questions waiting for an answer" });
    await user.keyboard("{Enter}");
    const dialog = await screen.findByRole("dialog");
    const field = within(dialog).getByLabelText(/Your answer/);
    expect(field).toHaveFocus();
    await user.keyboard("ACC-7{Enter}");
    await waitFor(() => expect(calls.find((c) => c.url === "/api/executions/ex-q/steps/ask/answer")?.body).toEqual({ answer: "ACC-7" }));
    expect(await screen.findByText("Answered Which account.")).toBeInTheDocument();
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it("follows the shortcut setting: with Alt, j alone does nothing; off, nothing moves", async () => {
    const { user } = await openQueue("/queue", { questions: [] });
    await screen.findByRole("listbox", { name: "Pending suggestions" });
    const selected = () => screen.getAllByRole("option").find((o) => o.getAttribute("aria-selected") === "true");
    expect(selected()).toHaveTextContent("ACME");
    setShortcutMode("alt");
    await user.keyboard("j");
    expect(selected()).toHaveTextContent("ACME");
    await user.keyboard("{Alt>}j{/Alt}");
    expect(selected()).toHaveTextContent("Globex");
    setShortcutMode("off");
    await user.keyboard("k{Alt>}k{/Alt}");
    expect(selected()).toHaveTextContent("Globex");
  });
});
