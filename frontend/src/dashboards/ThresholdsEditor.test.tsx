import { screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import { checkThresholds, ThresholdsEditor } from "./ThresholdsEditor";

const current = { coaching_after: 10, auto_min_window: 20, auto_acceptance: 0.85, window: 50, auto_alpha: 0.05 };

function renderEditor() {
  return renderPage(<ThresholdsEditor workflowId="wf-1" current={current} />, { route: "/w", path: "/w" });
}

describe("ThresholdsEditor", () => {
  it("sends the changed thresholds with the keyboard and says they are saved", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() => jsonResponse({ id: "wf-1" }));
    renderEditor();

    await user.tab();
    expect(screen.getByRole("button", { name: "Change thresholds" })).toHaveFocus();
    await user.keyboard("{Enter}");
    const acceptance = screen.getByLabelText("AUTO-ready acceptance (%)");
    expect(acceptance).toHaveValue("85");
    await user.clear(acceptance);
    await user.type(acceptance, "90");
    await user.clear(screen.getByLabelText("Decisions needed"));
    await user.type(screen.getByLabelText("Decisions needed"), "30{Enter}");

    expect(await screen.findByRole("status")).toHaveTextContent("Thresholds saved");
    const put = calls.find((c) => c.method === "PUT")!;
    expect(put.url).toBe("/api/workflows/wf-1/thresholds");
    expect(put.body).toEqual({ coaching_after: 10, auto_min_window: 30, auto_acceptance: 0.9, window: 50, auto_alpha: 0.05 });
  });

  it("refuses impossible values before sending and shows the server's 422 on its field", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() =>
      errorResponse(422, "validation_failed", "request is invalid", { window: ["Must be less than 1000."] }),
    );
    renderEditor();
    await user.click(screen.getByRole("button", { name: "Change thresholds" }));

    await user.clear(screen.getByLabelText("Decisions needed"));
    await user.type(screen.getByLabelText("Decisions needed"), "80");
    await user.click(screen.getByRole("button", { name: "Save thresholds" }));
    expect(screen.getByRole("alert")).toHaveTextContent(
      "Decisions needed: cannot be more than the rolling window, or AUTO could never be reached",
    );
    expect(screen.getByLabelText("Decisions needed")).toHaveAttribute("aria-invalid", "true");
    expect(calls.filter((c) => c.method === "PUT")).toHaveLength(0);

    await user.clear(screen.getByLabelText("Decisions needed"));
    await user.type(screen.getByLabelText("Decisions needed"), "20");
    await user.click(screen.getByRole("button", { name: "Save thresholds" }));
    expect(await screen.findByText("Rolling window: Must be less than 1000.")).toBeInTheDocument();
    expect(calls.filter((c) => c.method === "PUT")).toHaveLength(1);
  });

  it("checks every field as the server does", () => {
    const draft = { auto_acceptance: "101", auto_min_window: "0", window: "2000", coaching_after: "1.5", auto_alpha: "0.5" };
    expect(checkThresholds(draft).problems).toEqual({
      auto_acceptance: "must be a percentage from 0 to 100",
      auto_min_window: "must be 1 or more",
      window: "must be 1–1000",
      coaching_after: "must be a whole number",
      auto_alpha: "must be more than 0 and less than 0.5",
    });
    expect(checkThresholds({ auto_acceptance: "85", auto_min_window: "20", window: "50", coaching_after: "0", auto_alpha: "0.01" }).value)
      .toEqual({ auto_acceptance: 0.85, auto_min_window: 20, window: 50, coaching_after: 0, auto_alpha: 0.01 });
    expect(checkThresholds({ auto_acceptance: "85", auto_min_window: "20", window: "50", coaching_after: "0", auto_alpha: "0" }).problems)
      .toEqual({ auto_alpha: "must be more than 0 and less than 0.5" });
  });
});
