import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { changed } from "../test/queueChanged";
import { jsonResponse } from "../test/utils";
import { queueItem } from "./testFixtures";
import type { QueueItem } from "./types";

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

function page(items: QueueItem[]) {
  return { items, total: items.length, page: 1, per_page: 50 };
}

const newest = queueItem({
  suggestion_id: "s-3",
  execution_id: "ex-3",
  workflow_name: "Invoice intake",
  step_name: "Read the invoices",
  tool: "file.read",
  confidence: 0.91,
  created_at: minutesAgo(2),
});
const paused = queueItem({
  suggestion_id: "s-2",
  execution_id: "ex-2",
  workflow_name: "Refunds",
  step_name: "Pay back",
  tool: "http.request",
  confidence: 0.3,
  execution_status: "paused",
  created_at: minutesAgo(90),
  region: { id: "r-1", name: "small refunds", mode: "auto", current: true },
});
const rejected = queueItem({
  suggestion_id: "s-1",
  execution_id: "ex-1",
  workflow_name: "Customer greeting",
  purpose: "correction",
  created_at: minutesAgo(60 * 24 * 3),
});

async function openQueue(items: () => QueueItem[]) {
  // the queue; what a panel opened from it reads is not there (404: the panel says so, as it would)
  const { calls } = stubSignedInFetch((call) =>
    call.url.startsWith("/api/coaching/queue")
      ? jsonResponse(page(items()))
      : jsonResponse({ error: { code: "not_found", message: "not in this test", details: {} } }, 404),
  );
  renderApp("/queue");
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  return { calls, user: userEvent.setup() };
}

const options = () => within(screen.getByRole("listbox")).getAllByRole("option");

describe("QueuePage", () => {
  it("lists the pending suggestions newest first, with what an operator needs to pick one", async () => {
    await openQueue(() => [newest, paused, rejected]);

    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    const list = await screen.findByRole("listbox", { name: "Pending suggestions" });
    const [first, second, third] = within(list).getAllByRole("option");
    expect(first).toHaveTextContent("Invoice intake");
    expect(first).toHaveTextContent("Read the invoices · file.read");
    expect(first).toHaveTextContent("Confidence 91% (high)");
    expect(first).toHaveTextContent("2 min ago");
    expect(second).toHaveTextContent("‖ Paused");
    expect(second).toHaveTextContent("2 h ago");
    expect(second).toHaveTextContent("Region: small refunds (auto)");
    expect(first).not.toHaveTextContent("Region:");
    expect(first).not.toHaveTextContent("Paused");
    expect(third).toHaveTextContent("Rejected: needs a correction");
    expect(third).toHaveTextContent("3 days ago");
    expect(screen.getByText("3 suggestions wait for a decision")).toBeInTheDocument();
    expect(lastSocket().sent("join_workspace")).toHaveLength(1);
  });

  it("moves the selection with j and k and opens the selected one with Enter", async () => {
    const { user } = await openQueue(() => [newest, paused, rejected]);
    const list = await screen.findByRole("listbox");

    expect(options()[0]).toHaveAttribute("aria-selected", "true");
    expect(list).toHaveAttribute("aria-activedescendant", options()[0].id);
    await user.keyboard("jj");
    expect(options()[2]).toHaveAttribute("aria-selected", "true");
    expect(options()[0]).toHaveAttribute("aria-selected", "false");
    await user.keyboard("j"); // stays on the last
    expect(options()[2]).toHaveAttribute("aria-selected", "true");
    await user.keyboard("k");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
    expect(list).toHaveAttribute("aria-activedescendant", options()[1].id);

    await user.keyboard("{Enter}");
    await waitFor(() => expect(window.location.pathname).toBe("/executions/ex-2/coach"));
  });

  it("also moves with the arrow keys once the list has focus", async () => {
    const { user } = await openQueue(() => [newest, paused]);
    const list = await screen.findByRole("listbox");
    list.focus();
    await user.keyboard("{ArrowDown}");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{Home}");
    expect(options()[0]).toHaveAttribute("aria-selected", "true");
  });

  it("does not take j, k or Enter typed in a field", async () => {
    const { user } = await openQueue(() => [newest, paused]);
    await screen.findByRole("listbox");
    screen.getByLabelText("Workspace").focus();
    await user.keyboard("j");
    expect(options()[0]).toHaveAttribute("aria-selected", "true");
  });

  it("updates live: a pushed suggestion appears, a decided one goes", async () => {
    let items = [paused];
    await openQueue(() => items);
    await screen.findByRole("listbox");
    expect(options()).toHaveLength(1);

    items = [newest, paused];
    await act(async () => lastSocket().push("queue_changed", changed(["coaching_suggestion"], ["ex-1", null])));
    await waitFor(() => expect(options()).toHaveLength(2));
    expect(options()[0]).toHaveTextContent("Invoice intake");

    items = [newest];
    await act(async () => lastSocket().push("queue_changed", changed(["execution_update"], ["ex-2", "running"])));
    await waitFor(() => expect(options()).toHaveLength(1));
    expect(screen.queryByText("Refunds")).not.toBeInTheDocument();
  });

  it("reads the queue once for a burst of pushes, not once per push", async () => {
    const { calls } = await openQueue(() => [paused]);
    await screen.findByRole("listbox");
    const reads = () => calls.filter((c) => c.url.startsWith("/api/coaching/queue")).length;
    const before = reads();
    await act(async () => {
      for (let i = 0; i < 20; i += 1) {
        lastSocket().push("queue_changed", changed(["coaching_suggestion", "execution_update"], [`ex-${i}`, "running"]));
      }
    });
    await waitFor(() => expect(reads()).toBe(before + 1));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(reads()).toBe(before + 1);
  });

  it("accepts the selected suggestion with a, confirming a risky call with Enter, and says why not when it cannot", async () => {
    const read = queueItem({ ...newest, suggestion_id: "s-read", execution_id: "ex-read", risk: "read", policy: null });
    const risky = queueItem({ ...newest, suggestion_id: "s-pay", execution_id: "ex-pay", step_name: "Pay back",
      tool: "http.request", risk: "external", params: { amount: 75 }, policy: null, created_at: minutesAgo(5) });
    const { user } = await openQueue(() => [read, risky, rejected]);
    await screen.findByRole("listbox");
    const decisions = () => lastSocket().sent("coaching_decision") as { suggestion_id: string; decision: string }[];

    await user.keyboard("a"); // a read call: at once, as on its panel
    await waitFor(() => expect(decisions()).toHaveLength(1));
    expect(decisions()[0]).toMatchObject({ execution_id: "ex-read", suggestion_id: "s-read", decision: "accept" });
    expect(await screen.findByText("Accepted Read the invoices (Invoice intake).")).toBeInTheDocument();

    await user.keyboard("j");
    await user.keyboard("a"); // an external call: armed first
    expect(screen.getByText(/Press Enter to accept Pay back \(http\.request, amount 75; external\)/)).toBeInTheDocument();
    expect(decisions()).toHaveLength(1);
    await user.keyboard("{Enter}");
    await waitFor(() => expect(decisions()).toHaveLength(2));
    expect(decisions()[1]).toMatchObject({ suggestion_id: "s-pay", decision: "accept" });

    await user.keyboard("j");
    await user.keyboard("a"); // rejected: it takes a correction, not an accept
    expect(await screen.findByText(/This step was rejected: it takes a correction/)).toBeInTheDocument();
    expect(decisions()).toHaveLength(2);
    expect(window.location.pathname).toBe("/queue");
  });

  it("leaves the search field with Esc, so that j and k move again", async () => {
    const { user } = await openQueue(() => [newest, paused]);
    await screen.findByRole("listbox");
    await user.keyboard("/");
    const search = screen.getByLabelText("Search");
    expect(search).toHaveFocus();
    await user.keyboard("In{Escape}");
    expect(search).not.toHaveFocus();
    expect(search).toHaveValue("In");
    await user.keyboard("j");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
  });

  it("says so when nothing waits", async () => {
    await openQueue(() => []);
    expect(await screen.findByText(/Nothing to decide/)).toBeInTheDocument();
    expect(screen.queryByRole("listbox")).not.toBeInTheDocument();
  });
});
