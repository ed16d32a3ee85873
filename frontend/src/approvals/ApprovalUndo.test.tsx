import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { jsonResponse } from "../test/utils";
import type { Approval } from "./types";

const signOff: Approval = {
  approval_id: "ap-1",
  execution_id: "ex-9",
  step_id: "sign_off",
  kind: "step",
  status: "pending",
  message: "Pay 1840 to Acme?",
  tool: null,
  params: null,
  policy: null,
  approvers: { roles: ["lead"], users: [] },
  quorum: 1,
  approvals: 0,
  separate_duties: false,
  started_by: "3",
  decisions: [],
  deadline: null,
  timeout_s: null,
  on_timeout: "reject",
  created_at: new Date(Date.now() - 60_000).toISOString(),
  agent: null,
  decided_at: null,
};

/** The queue with one approval; the server holds an approve for 10 s and takes it back on /undo. */
async function openQueue() {
  const server = { pending: true };
  const { calls } = stubSignedInFetch((call) => {
    if (call.url.startsWith("/api/approvals?")) {
      const items = server.pending ? [signOff] : [];
      return jsonResponse({ items, total: items.length, page: 1, per_page: 100 });
    }
    if (call.url === "/api/approvals/ap-1" && call.method === "POST") {
      server.pending = false;
      const deadline = new Date(Date.now() + 10_000).toISOString();
      return jsonResponse({
        approval: { ...signOff, status: "approved", approvals: 1 },
        execution: { execution_id: "ex-9", status: "waiting_approval", step_id: "sign_off",
                     gate: { kind: "held", step_id: "sign_off", approval_id: "ap-1", decision: "approve", deadline } },
      });
    }
    if (call.url === "/api/approvals/ap-1/undo" && call.method === "POST") {
      server.pending = true;
      return jsonResponse({ approval: signOff, execution: { execution_id: "ex-9", status: "waiting_approval" } });
    }
    if (call.url.startsWith("/api/coaching/queue")) return jsonResponse({ items: [], total: 0, page: 1, per_page: 50 });
    return jsonResponse({});
  });
  renderApp("/queue");
  await waitFor(() => expect(lastSocket().connected).toBe(true));
  await screen.findByRole("listbox", { name: "Pending approvals" });
  return { calls, user: userEvent.setup() };
}

const undos = (calls: { url: string }[]) => calls.filter((c) => c.url === "/api/approvals/ap-1/undo");

describe("the queue's undo", () => {
  it("after a held approve it shows the countdown, and z puts the approval back in the list", async () => {
    const { calls, user } = await openQueue();
    await user.keyboard("a");
    await user.keyboard("{Enter}");
    const bar = await screen.findByTestId("undo-bar");
    expect(bar).toHaveTextContent("Approved Pay 1840 to Acme?");
    expect(bar).toHaveTextContent(/It acts in (9|10) s/);
    expect(screen.queryByText(/^Approved: /)).toBeNull(); // the undo bar says it: one banner, not two
    await waitFor(() => expect(screen.queryByRole("listbox", { name: "Pending approvals" })).toBeNull());
    await user.keyboard("z");
    await waitFor(() => expect(undos(calls)).toHaveLength(1));
    const list = await screen.findByRole("listbox", { name: "Pending approvals" });
    expect(within(list).getByRole("option")).toHaveTextContent("Pay 1840 to Acme?");
    expect(screen.queryByTestId("undo-bar")).toBeNull();
    expect(screen.getByText("Taken back: the approval waits for a decision again.")).toBeInTheDocument();
  });
});
