import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { AsRole } from "../test/utils";
import { ModeActions, type ScopeMode } from "./ModeActions";

function draw(mode: ScopeMode, autoReady: boolean, role = "lead", notReady?: string) {
  const onMode = vi.fn();
  render(
    <AsRole role={role}>
      <ModeActions mode={mode} autoReady={autoReady} name="fetch" onMode={onMode} notReady={notReady} />
    </AsRole>,
  );
  const names = screen.getAllByRole("button").map((b) => b.textContent?.trim());
  return { onMode, names };
}

describe("ModeActions: one set of mode buttons for a step, a region and a gateway tool", () => {
  it("offers Unpin only when pinned", () => {
    expect(draw("always_review", true).names).toEqual(["Unpin fetch"]);
  });

  it("in AUTO: Back to coaching, and Pin", () => {
    expect(draw("auto", true).names).toEqual(["Back to coaching fetch", "Pin fetch to always review"]);
  });

  it("promotes a ready scope, and without a reason shows no Promote for one that is not ready", async () => {
    const ready = draw("coaching", true);
    expect(ready.names).toEqual(["Promote fetch to AUTO", "Pin fetch to always review"]);
    await userEvent.setup().click(screen.getByRole("button", { name: "Promote fetch to AUTO" }));
    expect(ready.onMode).toHaveBeenCalledWith("auto");
  });

  it("without readiness and no reason given: a lead has nothing to promote", () => {
    expect(draw("coaching", false).names).toEqual(["Pin fetch to always review"]);
  });

  it("an admin forces", async () => {
    const { onMode, names } = draw("coaching", false, "admin");
    expect(names).toEqual(["Force into AUTO… fetch", "Pin fetch to always review"]);
    await userEvent.setup().click(screen.getByRole("button", { name: "Force into AUTO… fetch" }));
    expect(onMode).toHaveBeenCalledWith("auto", true);
  });

  it("with a reason, a Promote that is not ready stays focusable, says why, and does nothing", async () => {
    const { onMode } = draw("coaching", false, "lead", "Not AUTO-ready: 3 more decisions, all accepted.");
    const promote = screen.getByRole("button", { name: "Promote fetch to AUTO" });
    expect(promote).toHaveAttribute("aria-disabled", "true");
    expect(promote).toHaveAccessibleDescription("Not AUTO-ready: 3 more decisions, all accepted.");
    await userEvent.setup().click(promote);
    expect(onMode).not.toHaveBeenCalled();
  });
});
