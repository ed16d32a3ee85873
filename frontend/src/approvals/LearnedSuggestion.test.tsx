import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { lastSocket } from "../test/fakeSocket";
import { jsonResponse } from "../test/utils";
import type { Approval } from "./types";

const HELD: Approval = {
  approval_id: "ap-l", execution_id: null, agent: "fixer", kind: "gateway", step_id: "shop.refund", status: "pending",
  message: "Agent fixer calls shop.refund. Learned corrections suggest: reason: 'late' → 'lost'",
  tool: "shop.refund", params: { order_id: "A-8", reason: "late" },
  policy: {
    effect: "require_review", default: true, matched: [],
    rule: { id: null, name: "workspace default", scope: "workspace", reason: "the tools of an untrusted server" }, risk: "destructive",
    learned: { pack_id: "p-1", params: { order_id: "A-8", reason: "lost" }, text: "reason: 'late' → 'lost'",
               rules: [{ field: "reason", before: "late", after: "lost", count: 3 }] },
  },
  approvers: { roles: ["lead"], users: [] }, quorum: 1, approvals: 0, separate_duties: false, started_by: null,
  decisions: [], deadline: null, timeout_s: null, on_timeout: "reject", created_at: new Date().toISOString(), decided_at: null,
};

describe("a gateway call whose tool has accepted learned rules", () => {
  it("shows the suggested edit and starts the edit from it", async () => {
    const { calls } = stubSignedInFetch((call) => {
      if (call.url.startsWith("/api/approvals?")) return jsonResponse({ items: [HELD], total: 1, page: 1, per_page: 100 });
      if (call.url.startsWith("/api/approvals/") && call.method === "POST")
        return jsonResponse({ approval: { ...HELD, status: "approved" } });
      if (call.url.startsWith("/api/coaching/queue")) return jsonResponse({ items: [], total: 0, page: 1, per_page: 50 });
      return jsonResponse({});
    });
    renderApp("/queue");
    await waitFor(() => expect(lastSocket().connected).toBe(true));
    await screen.findByRole("listbox", { name: "Pending approvals" });
    const user = userEvent.setup();
    const card = screen.getByRole("region", { name: "Agent call (MCP gateway): shop.refund" });
    expect(within(card).getByTestId("approval-learned")).toHaveTextContent("reason: 'late' → 'lost'");
    await user.keyboard("e");
    const dialog = await screen.findByRole("dialog");
    await user.click(within(dialog).getByRole("button", { name: "Approve with these params" }));
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      decision: "edit", comment: null, params: { order_id: "A-8", reason: "lost" } });
  });
});
