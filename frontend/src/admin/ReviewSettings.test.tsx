import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch, type RecordedCall } from "../test/utils";
import SettingsPage from "./SettingsPage";

const DEFAULTS = { check_rate: 0, evidence_from: "all", min_checks: 5, min_catch_rate: 0.8, max_fast_share: 0.5 };
const SAVED = {
  attentive_floor_ms: 1500, default_ms: 1500, min_ms: 100, max_ms: 600000, workspace: false, check_rate: 0,
  max_check_rate: 0.2, evidence_from: "all", min_checks: 5, min_catch_rate: 0.8, max_fast_share: 0.5, defaults: DEFAULTS,
};

function open(role: string, put: (call: RecordedCall) => Response = (call) => jsonResponse({ ...SAVED, ...(call.body as object) })) {
  const stub = stubFetch((call) => {
    if (call.url === "/api/workspace/reviews" && call.method === "GET") return jsonResponse(SAVED);
    if (call.url === "/api/workspace/reviews" && call.method === "PUT") return put(call);
    if (call.url === "/api/auth/tokens") return jsonResponse({ items: [] });
    return jsonResponse({});
  });
  renderPage(
    <AsRole role={role}>
      <SettingsPage />
    </AsRole>,
    { route: "/settings", path: "/settings" },
  );
  return { ...stub, user: userEvent.setup() };
}

const puts = (calls: RecordedCall[]) => calls.filter((c) => c.method === "PUT" && c.url === "/api/workspace/reviews");

describe("Settings → Attentive reviews", () => {
  it("is a lead's and an admin's, not an operator's", async () => {
    open("operator");
    expect(await screen.findByRole("heading", { name: "API tokens" })).toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "Attentive reviews" })).toBeNull();
  });

  it("shows the settings and saves only what changed; an emptied field goes back to its default", async () => {
    const { calls, user } = open("lead");
    const form = await screen.findByRole("form", { name: "Attentive reviews" });
    const rate = within(form).getByLabelText("Check suggestions: share of suggestions");
    expect(rate).toHaveValue("0");
    expect(rate).toHaveAccessibleDescription(/At most 0.2/);
    expect(within(form).getByRole("radio", { name: "Every decision" })).toBeChecked();
    await user.clear(rate);
    await user.type(rate, "0.05");
    await user.click(within(form).getByRole("radio", { name: "Only attentive reviewers' decisions" }));
    await user.clear(within(form).getByLabelText("Catch rate, at least"));
    await user.click(within(form).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(puts(calls)).toHaveLength(1));
    expect(puts(calls)[0].body).toEqual({ check_rate: 0.05, min_catch_rate: null, evidence_from: "attentive" });
    expect(await within(form).findByRole("status")).toHaveTextContent(/Saved: check suggestions/);

    await user.click(within(form).getByRole("button", { name: "Back to the defaults" }));
    await waitFor(() => expect(puts(calls)).toHaveLength(2));
    expect(puts(calls)[1].body).toEqual({
      attentive_floor_ms: null, check_rate: null, min_checks: null, min_catch_rate: null, max_fast_share: null,
      evidence_from: null,
    });
  });

  it("says nothing changed without asking the server, and a word where a number goes, on the field", async () => {
    const { calls, user } = open("admin");
    const form = await screen.findByRole("form", { name: "Attentive reviews" });
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(within(form).getByRole("status")).toHaveTextContent("Nothing changed.");
    const floor = within(form).getByLabelText("Fast-accept floor (ms)");
    await user.clear(floor);
    await user.type(floor, "fast");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(floor).toHaveAttribute("aria-invalid", "true");
    expect(floor).toHaveAccessibleDescription(/Fast-accept floor \(ms\): must be a number/);
    expect(floor).toHaveFocus();
    expect(puts(calls)).toHaveLength(0);
  });

  it("shows the server's 422 beside the field it names, and focuses it", async () => {
    const { user } = open("lead", () =>
      errorResponse(422, "validation_failed", "invalid request", {
        json: { check_rate: ["Must be greater than or equal to 0 and less than or equal to 0.2."] },
      }));
    const form = await screen.findByRole("form", { name: "Attentive reviews" });
    const rate = within(form).getByLabelText("Check suggestions: share of suggestions");
    await user.clear(rate);
    await user.type(rate, "0.5");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(rate).toHaveAttribute("aria-invalid", "true"));
    expect(rate).toHaveAccessibleDescription(/less than or equal to 0.2/);
    expect(rate).toHaveFocus();
    expect(within(form).getByLabelText("Fast-accept floor (ms)")).not.toHaveAttribute("aria-invalid");
  });
});
