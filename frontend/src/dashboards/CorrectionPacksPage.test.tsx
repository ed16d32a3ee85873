import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { lastSocket } from "../test/fakeSocket";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch, type RecordedCall } from "../test/utils";
import CorrectionPacksPage from "./CorrectionPacksPage";
import { learningWorkflow, otherPack, pack, readyWorkflow, renderLive } from "./testFixtures";
import type { CorrectionPack } from "./types";

type Handler = (call: RecordedCall) => Response | undefined;

function stubPacks(override: Handler = () => undefined, packs: () => CorrectionPack[] = () => [pack, otherPack]) {
  return stubFetch((call) => {
    const special = override(call);
    if (special) return special;
    if (call.url === "/api/metrics/workflows") return jsonResponse({ items: [readyWorkflow, learningWorkflow] });
    if (call.url === "/api/correction-packs") return jsonResponse({ items: packs() });
    if (call.url === "/api/correction-packs?workflow_id=wf-refund")
      return jsonResponse({ items: packs().filter((p) => p.workflow_id === "wf-refund") });
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const renderPacks = (route = "/correction-packs", role = "lead") =>
  renderPage(
    <AsRole role={role}>
      <CorrectionPacksPage />
    </AsRole>,
    { route, path: "/correction-packs" },
  );

const packArticle = (step: string) => screen.findByRole("article", { name: new RegExp(`^Step ${step}`) });

describe("CorrectionPacksPage", () => {
  it("lists packs per workflow with each change, its count, consistency and whether it became a rule", async () => {
    stubPacks();
    renderPacks();

    expect(screen.getByRole("heading", { level: 1, name: "Correction packs" })).toBeInTheDocument();
    const mail = await packArticle("mail");
    expect(screen.getByRole("heading", { level: 2, name: /Invoice intake/ })).toBeInTheDocument();
    expect(mail).toHaveTextContent("4 corrections · 1 learned rule");
    expect(within(mail).getByText("Enabled")).toBeInTheDocument();

    const table = within(mail).getByRole("table", { name: "Changes operators made at step mail of Invoice intake" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((r) => [within(r).getByRole("rowheader").textContent, ...within(r).getAllByRole("cell").slice(0, 4).map((c) => c.textContent)])).toEqual([
      ["to", "\"a@example.com\"→ becomes \"b@example.com\"", "4", "100%", "✓ Learned rule"],
      ["cc", "(absent)→ becomes \"boss@example.com\"", "1", "25%", "Not yet"],
    ]);

    const pay = await packArticle("pay");
    expect(within(pay).getByText("Disabled")).toBeInTheDocument();
    expect(screen.getByRole("heading", { level: 2, name: /Refund request/ })).toBeInTheDocument();
  });

  it("shows an operator the packs but not the lead's enable, disable, export and import", async () => {
    stubPacks();
    renderPacks("/correction-packs", "operator");
    const mail = await packArticle("mail");
    expect(within(mail).getByText("Enabled")).toBeInTheDocument();
    expect(within(mail).queryAllByRole("button")).toEqual([]);
    expect(screen.queryByRole("button", { name: /Import/ })).not.toBeInTheDocument();
  });

  it("removes one change from a pack after a confirmation, and says so", async () => {
    const user = userEvent.setup();
    const after: CorrectionPack = { ...pack, changes: pack.changes.filter((c) => c.field !== "to"), rules: [] };
    const { calls } = stubPacks((call) =>
      call.method === "POST" && call.url === `/api/correction-packs/${pack.id}/remove-change`
        ? jsonResponse(after)
        : undefined,
    );
    renderPacks();
    const mail = await packArticle("mail");
    await user.click(within(mail).getByRole("button", { name: /^Remove the change to: "a@example.com" → "b@example.com"/ }));
    const dialog = screen.getByRole("dialog", { name: "Remove this change from the pack?" });
    expect(dialog).toHaveTextContent("its rule stops applying");
    await user.click(within(dialog).getByRole("button", { name: "Remove the change" }));

    await waitFor(() => expect(within(mail).getByRole("status")).toHaveTextContent(/Removed to: "a@example.com" → "b@example.com"/));
    const sent = calls.find((c) => c.method === "POST");
    expect(sent?.body).toEqual({ field: "to", before: "a@example.com", after: "b@example.com" });
  });

  it("says how many corrections were not counted because their step failed", async () => {
    stubPacks(undefined, () => [{ ...pack, discounted: 1 }, otherPack]);
    renderPacks();
    const mail = await packArticle("mail");
    expect(within(mail).getByTestId("discounted")).toHaveTextContent(
      "1 correction not counted: the step failed because of it.",
    );
  });

  it("filters by workflow through the address", async () => {
    const user = userEvent.setup();
    const { calls } = stubPacks();
    renderPacks();
    await packArticle("mail");

    await user.selectOptions(screen.getByLabelText("Workflow"), "Refund request");
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/correction-packs?workflow=wf-refund"));
    await packArticle("pay");
    expect(screen.queryByRole("article", { name: /^Step mail/ })).not.toBeInTheDocument();
    expect(calls.map((c) => c.url)).toContain("/api/correction-packs?workflow_id=wf-refund");
  });

  it("disables a pack with PATCH and shows its new state", async () => {
    const user = userEvent.setup();
    let current = pack;
    const { calls } = stubPacks(
      (call) => {
        if (call.method !== "PATCH") return undefined;
        current = { ...pack, enabled: (call.body as { enabled: boolean }).enabled };
        return jsonResponse(current);
      },
      () => [current, otherPack],
    );
    renderPacks();
    const mail = await packArticle("mail");

    await user.click(within(mail).getByRole("button", { name: "Disable the pack of step mail of Invoice intake" }));

    await waitFor(() => expect(within(mail).getByText("Disabled")).toBeInTheDocument());
    expect(within(mail).getByRole("status")).toHaveTextContent("The pack of step mail of Invoice intake is disabled");
    const patch = calls.find((c) => c.method === "PATCH")!;
    expect([patch.url, patch.body]).toEqual(["/api/correction-packs/pack-mail", { enabled: false }]);
    expect(within(mail).getByRole("button", { name: "Enable the pack of step mail of Invoice intake" })).toBeInTheDocument();
  });

  it("says why a toggle failed", async () => {
    const user = userEvent.setup();
    stubPacks((call) => (call.method === "PATCH" ? errorResponse(403, "forbidden", "this needs the lead role") : undefined));
    renderPacks();
    const mail = await packArticle("mail");

    await user.click(within(mail).getByRole("button", { name: /^Disable/ }));
    const alert = await within(mail).findByRole("alert");
    expect(alert).toHaveTextContent("Could not disable the pack");
    expect(alert).toHaveTextContent("this needs the lead role");
    expect(within(mail).getByText("Enabled")).toBeInTheDocument();
  });

  it("exports a pack as a JSON download", async () => {
    const user = userEvent.setup();
    const exported = { format: "coach.correction-pack/1", workflow_id: "wf-invoice", step_id: "mail", enabled: true, stats: { corrections: 4, groups: pack.changes } };
    stubPacks((call) => (call.url === "/api/correction-packs/pack-mail/export" ? jsonResponse(exported) : undefined));
    const blobs: Blob[] = [];
    // jsdom has no object URLs: record the blob instead.
    const { createObjectURL, revokeObjectURL } = URL;
    URL.createObjectURL = (b: Blob) => (blobs.push(b), "blob:pack");
    URL.revokeObjectURL = () => undefined;
    onTestFinished(() => {
      Object.assign(URL, { createObjectURL, revokeObjectURL });
    });
    const clicked: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this.download);
    });
    renderPacks();
    const mail = await packArticle("mail");

    await user.click(within(mail).getByRole("button", { name: "Export JSON of the pack of step mail of Invoice intake" }));

    await waitFor(() => expect(clicked).toEqual(["correction-pack-invoice-intake-mail.json"]));
    expect(JSON.parse(await blobs[0]!.text())).toEqual(exported);
    expect(within(mail).getByRole("status")).toHaveTextContent("Exported as correction-pack-invoice-intake-mail.json.");
  });

  it("highlights, scrolls to and focuses the pack named by ?pack=", async () => {
    stubPacks();
    const scrolled: string[] = [];
    // jsdom does not scroll: record which element was asked to.
    const { scrollIntoView } = Element.prototype;
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.id);
    };
    onTestFinished(() => {
      Element.prototype.scrollIntoView = scrollIntoView;
    });
    renderPacks("/correction-packs?pack=pack-refund");

    const pay = await packArticle("pay");
    await waitFor(() => expect(pay).toHaveFocus());
    expect(pay).toHaveClass("pack--linked");
    expect(pay).toHaveTextContent("linked from a suggestion");
    expect(scrolled).toEqual(["pack-pack-refund"]);
    expect(await packArticle("mail")).not.toHaveClass("pack--linked");
  });

  it("says so when the linked pack does not exist", async () => {
    stubPacks();
    renderPacks("/correction-packs?pack=gone");
    expect(await screen.findByText("The linked pack is not listed")).toBeInTheDocument();
    expect(screen.getByRole("note")).toHaveTextContent("Correction pack gone does not exist in this workspace");
  });

  it("imports pasted JSON into a chosen workflow and links to the new pack", async () => {
    const user = userEvent.setup();
    const created = { ...pack, id: "pack-new", workflow_id: "wf-refund" };
    const { calls } = stubPacks((call) => (call.url === "/api/correction-packs/import" ? jsonResponse(created, 201) : undefined));
    renderPacks();
    await packArticle("mail");

    const text = { format: "coach.correction-pack/1", workflow_id: "wf-invoice", step_id: "mail", stats: { corrections: 1, groups: [] } };
    await user.click(screen.getByLabelText("Pack JSON"));
    await user.paste(JSON.stringify(text));
    await user.selectOptions(screen.getByLabelText("Import into"), "Refund request");
    await user.click(screen.getByRole("button", { name: "Import pack" }));

    expect(await screen.findByText(/Imported the pack of step/)).toHaveTextContent("Imported the pack of step mail of Refund request");
    expect(screen.getByRole("link", { name: "show it" })).toHaveAttribute("href", "/correction-packs?pack=pack-new");
    expect(calls.find((c) => c.method === "POST")!.body).toEqual({ ...text, workflow_id: "wf-refund" });
    expect(screen.getByLabelText("Pack JSON")).toHaveValue("");
  });

  it("reads an exported file into the text box", async () => {
    const user = userEvent.setup();
    stubPacks();
    renderPacks();
    await packArticle("mail");

    const file = new File(['{"format": "coach.correction-pack/1"}'], "pack.json", { type: "application/json" });
    await user.upload(screen.getByLabelText("Exported file"), file);
    await waitFor(() => expect(screen.getByLabelText("Pack JSON")).toHaveValue('{"format": "coach.correction-pack/1"}'));
  });

  it("refuses text that is not JSON before sending it", async () => {
    const user = userEvent.setup();
    const { calls } = stubPacks();
    renderPacks();
    await packArticle("mail");

    await user.click(screen.getByLabelText("Pack JSON"));
    await user.paste("{not json");
    await user.click(screen.getByRole("button", { name: "Import pack" }));

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Nothing was imported");
    expect(alert).toHaveTextContent("This is not valid JSON");
    expect(calls.some((c) => c.method === "POST")).toBe(false);
  });

  it("lists the server's validation errors of an import", async () => {
    const user = userEvent.setup();
    stubPacks((call) =>
      call.method === "POST"
        ? errorResponse(422, "validation_failed", "workflow wf-invoice has no step 'nope'", { step_id: ["must be one of ['mail']"] })
        : undefined,
    );
    renderPacks();
    await packArticle("mail");

    await user.click(screen.getByLabelText("Pack JSON"));
    await user.paste(JSON.stringify({ format: "coach.correction-pack/1", workflow_id: "wf-invoice", step_id: "nope", stats: {} }));
    await user.click(screen.getByRole("button", { name: "Import pack" }));

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The server refused the pack");
    expect(alert).toHaveTextContent("workflow wf-invoice has no step 'nope'");
    expect(within(alert).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["step_id: must be one of ['mail']"]);
    expect(screen.getByLabelText("Pack JSON")).toHaveAttribute("aria-invalid", "true");
  });

  it("judges consistency among the corrections of the change's field and says when a rule started applying", async () => {
    const refund: CorrectionPack = {
      ...otherPack,
      enabled: true,
      corrections: 4,
      changes: [
        { field: "currency", before: "EUR", after: "GBP", count: 3 },
        { field: "amount", before: 40, after: 45, count: 1 },
      ],
      field_corrections: { currency: 3, amount: 1 },
      rules: [{ field: "currency", before: "EUR", after: "GBP", count: 3, share: 1, since: "2026-11-22T10:30:00+00:00" }],
      rules_changed_at: "2026-11-22T10:30:00+00:00",
      last_rule_change: { at: "2026-11-22T10:30:00+00:00", started: [{ field: "currency", before: "EUR", after: "GBP" }], stopped: [] },
    };
    stubPacks(undefined, () => [pack, refund]);
    renderPacks();
    const pay = await packArticle("pay");

    const table = within(pay).getByRole("table");
    const rows = within(table).getAllByRole("row").slice(1);
    // 3 of 3 currency corrections: the amount correction is not counted against it (it used to show 75%)
    expect(rows.map((r) => within(r).getAllByRole("cell").map((c) => c.textContent).slice(1, 4))).toEqual([
      ["3", "100%", "✓ Learned rule"],
      ["1", "100%", "Not yet"],
    ]);
    const note = within(pay).getByTestId("rule-change");
    expect(note).toHaveTextContent(/^Rule started applying at .+: currency "EUR" → "GBP"\.$/);
    expect(within(await packArticle("mail")).queryByTestId("rule-change")).not.toBeInTheDocument();
  });

  it("says when a rule stopped applying", async () => {
    const stopped: CorrectionPack = {
      ...pack,
      rules: [],
      last_rule_change: { at: "2026-11-22T12:00:00+00:00", started: [], stopped: [{ field: "to", before: "a@example.com", after: "b@example.com" }] },
    };
    stubPacks(undefined, () => [stopped, otherPack]);
    renderPacks();
    const note = within(await packArticle("mail")).getByTestId("rule-change");
    expect(note).toHaveTextContent(/^Rule stopped applying at .+: to "a@example.com" → "b@example.com"\.$/);
  });

  it("refetches the packs when the server pushes correction_pack_changed", async () => {
    let changed = false;
    const { calls } = stubPacks(undefined, () =>
      changed
        ? [{ ...pack, last_rule_change: { at: "2026-11-22T12:00:00+00:00", started: [], stopped: [pack.rules[0]] }, rules: [] }, otherPack]
        : [pack, otherPack],
    );
    renderLive(<CorrectionPacksPage />, "/correction-packs", "/correction-packs");
    const mail = await packArticle("mail");
    await waitFor(() => expect(lastSocket().sent("join_workspace")).toHaveLength(1));
    const reads = () => calls.filter((c) => c.url === "/api/correction-packs").length;
    const before = reads();

    changed = true;
    act(() =>
      lastSocket().push("correction_pack_changed", {
        pack_id: "pack-mail", workflow_id: "wf-invoice", step_id: "mail", enabled: true, cause: "correction",
        rules_changed_at: "2026-11-22T12:00:00+00:00", started: [], stopped: [pack.rules[0]], rules: [],
      }),
    );
    await waitFor(() => expect(reads()).toBe(before + 1));
    await waitFor(() => expect(within(mail).getByTestId("rule-change")).toHaveTextContent("Rule stopped applying"));
  });
});
