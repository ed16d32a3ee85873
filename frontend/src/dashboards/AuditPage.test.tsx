import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch, type RecordedCall } from "../test/utils";
import AuditPage from "./AuditPage";
import type { AuditEvent } from "./types";

const packChange: AuditEvent = {
  id: 12,
  seq: 12,
  actor: "lead@example.com",
  action: "pack_change",
  target_type: "correction_pack",
  target_id: "1860dffe7778423a9fe19aa9806de7ab",
  execution_id: null,
  before: { enabled: true },
  after: { enabled: false },
  result: "ok",
  created_at: "2026-11-22T20:54:01+00:00",
};

const correction: AuditEvent = {
  id: 10,
  seq: 10,
  actor: "ann@example.com",
  action: "correction",
  target_type: "suggestion",
  target_id: "0f2818fdc2fd4ea79d2fb68480679e95",
  execution_id: "5c8a10a1f57d40fca894c21bc0513cb1",
  before: { params: { to: "a@x" } },
  after: { correction: { to: "b@x" } },
  result: "correct",
  created_at: "2026-11-22T20:54:00+00:00",
};

const disabled: AuditEvent = {
  id: 9,
  seq: 9,
  actor: "admin@example.com",
  action: "member_disable",
  target_type: "user",
  target_id: "01a23a85b93570b3ae22d4ac39daff36",
  target_label: "ann@example.com",
  execution_id: null,
  before: null,
  after: { disabled: true },
  result: "ok",
  created_at: "2026-11-22T20:53:00+00:00",
};

function stubAudit(override: (call: RecordedCall) => Response | undefined = () => undefined, total = 2) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === "/api/audit/actions") return jsonResponse({ actions: ["decision", "correction", "pack_change"] });
    if (call.url.startsWith("/api/audit?") || call.url === "/api/audit")
      return jsonResponse({ items: [packChange, correction], total, page: call.url.includes("page=2") ? 2 : 1, per_page: 50 });
    return errorResponse(404, "not_found", `unexpected ${call.url}`);
  });
}

const renderAudit = (route = "/audit", role = "lead") =>
  renderPage(
    <AsRole role={role}>
      <AuditPage />
    </AsRole>,
    { route, path: "/audit" },
  );

describe("AuditPage", () => {
  it("names a member target by the email the server gives, not by its id (#40 item 17)", async () => {
    stubFetch((call) => {
      if (call.url === "/api/audit/actions") return jsonResponse({ actions: ["member_disable"] });
      if (call.url.startsWith("/api/audit")) return jsonResponse({ items: [disabled], total: 1, page: 1, per_page: 50 });
      return errorResponse(404, "not_found", `unexpected ${call.url}`);
    });
    renderAudit();
    const table = await screen.findByRole("table");
    const row = within(table).getAllByRole("row")[1]!;
    expect(within(row).getByText("ann@example.com", { exact: false })).toHaveAttribute("title", disabled.target_id);
    expect(within(row).queryByText(/01a23a85/)).toBeNull();
  });

  it("lists events with time, user, action, target and execution links", async () => {
    stubAudit();
    renderAudit();

    expect(screen.getByRole("heading", { level: 1, name: "Audit log" })).toBeInTheDocument();
    const table = await screen.findByRole("table", { name: "Audit events, 2 in total, page 1" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Time",
      "User",
      "Action",
      "Target",
      "Execution",
      "Result",
      "Before and after",
    ]);
    const [first, second] = within(table).getAllByRole("row").slice(1);
    expect(within(first!).getByRole("rowheader")).toHaveTextContent("event 12");
    expect(within(first!).getByText("lead@example.com")).toBeInTheDocument();
    expect(within(first!).getByText("Pack change")).toBeInTheDocument();
    expect(within(first!).getByRole("link", { name: "correction pack 1860dffe7778423a9fe19aa9806de7ab" })).toHaveAttribute(
      "href",
      "/correction-packs?pack=1860dffe7778423a9fe19aa9806de7ab",
    );
    expect(within(second!).getByRole("link", { name: "Execution 5c8a10a1f57d40fca894c21bc0513cb1" })).toHaveAttribute(
      "href",
      "/executions/5c8a10a1f57d40fca894c21bc0513cb1",
    );
    expect(within(second!).getByText(/"to": "b@x"/)).toBeInTheDocument();
  });

  it("applies the user, execution, action and since filters through the address and the API", async () => {
    const user = userEvent.setup();
    const { calls } = stubAudit();
    renderAudit();
    await screen.findByRole("table");

    await user.type(screen.getByLabelText("User"), "ann@example.com");
    await user.type(screen.getByLabelText("Execution"), " 5c8a10a1 ");
    // the choices are the server's actions
    expect(await screen.findByRole("option", { name: "Pack change" })).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText("Action"), "Correction");
    await user.type(screen.getByLabelText("Since"), "2026-11-22T10:30");
    await user.click(screen.getByRole("button", { name: "Apply filters" }));

    const since = new Date("2026-11-22T10:30").toISOString();
    const expected = `/api/audit?user=ann%40example.com&execution_id=5c8a10a1&action=correction&since=${encodeURIComponent(since)}`;
    await waitFor(() => expect(calls.map((c) => c.url)).toContain(expected));
    expect(screen.getByTestId("location")).toHaveTextContent(expected.replace("/api/audit", "/audit"));
    expect(await screen.findByRole("table", { name: "Audit events, 2 matching, page 1" })).toBeInTheDocument();
    expect(screen.getByLabelText("User")).toHaveValue("ann@example.com");

    await user.click(screen.getByRole("button", { name: "Clear" }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent(/^\/audit$/));
    expect(screen.getByLabelText("User")).toHaveValue("");
    expect(calls[calls.length - 1]!.url).toBe("/api/audit");
  });

  it("reads filters from the address", async () => {
    const { calls } = stubAudit();
    renderAudit("/audit?execution_id=ex-1&page=2");
    await screen.findByRole("table");
    expect(calls.filter((c) => c.url.startsWith("/api/audit?"))[0]!.url).toBe("/api/audit?execution_id=ex-1&page=2");
    expect(screen.getByLabelText("Execution")).toHaveValue("ex-1");
  });

  it("pages through the log", async () => {
    const user = userEvent.setup();
    const { calls } = stubAudit(undefined, 120);
    renderAudit();
    await screen.findByRole("table");

    await user.click(screen.getByRole("button", { name: "Next page" }));
    await waitFor(() => expect(calls.map((c) => c.url)).toContain("/api/audit?page=2"));
    expect(await screen.findByText("Page 2 of 3")).toBeInTheDocument();
  });

  it("verifies the chain and says it is intact", async () => {
    const user = userEvent.setup();
    stubAudit((call) => (call.url === "/api/audit/verify" ? jsonResponse({ ok: true, checked: 12 }) : undefined));
    renderAudit();

    await user.click(screen.getByRole("button", { name: "Verify chain" }));
    await waitFor(() =>
      expect(screen.getByText(/Chain intact/).closest("[role=status]")).toHaveTextContent(
        "Chain intact: 12 events checked, none edited or missing.",
      ),
    );
  });

  it("shows where a broken chain fails", async () => {
    const user = userEvent.setup();
    stubAudit((call) =>
      call.url === "/api/audit/verify"
        ? jsonResponse({ ok: false, checked: 4, first_bad_seq: 5, reason: "edited: the content of seq 5 does not match its hash" })
        : undefined,
    );
    renderAudit();

    await user.click(screen.getByRole("button", { name: "Verify chain" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Chain broken at event 5");
    expect(alert).toHaveTextContent("edited: the content of seq 5 does not match its hash 4 events before it are intact.");
  });

  it("tells an operator the audit log is for leads only", async () => {
    stubAudit(() => errorResponse(403, "forbidden", "this needs the lead role"));
    renderAudit();
    expect(await screen.findByText("Leads only")).toBeInTheDocument();
    expect(screen.getByText(/Audit events are shown to team leads/)).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });

  it("shows an operator only the notice: no filters, no chain check, nothing asked of the server", async () => {
    const { calls } = stubAudit(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 50 }));
    renderAudit("/audit", "operator");
    expect(await screen.findByText("Leads only")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Verify/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("form")).not.toBeInTheDocument();
    expect(screen.queryByLabelText(/Action/)).not.toBeInTheDocument();
    expect(calls.filter((c) => c.url.startsWith("/api/audit"))).toHaveLength(0);
  });
});
