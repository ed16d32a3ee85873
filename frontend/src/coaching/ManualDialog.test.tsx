import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { MAX_BODY_BYTES } from "../api/client";
import { ManualDialog, manualOutputTooLarge, parseManualOutput } from "./ManualDialog";
import type { Suggestion } from "./types";

const suggestion = { suggestion_id: "s1", step_id: "step1", step_name: "Say hello" } as unknown as Suggestion;

describe("the manual output's size", () => {
  it("is refused above the server's body limit, with the sizes, and passes below it", () => {
    expect(manualOutputTooLarge("small")).toBeNull();
    expect(manualOutputTooLarge("x".repeat(11 * 1024 * 1024))).toMatch(
      /^Too large to send: 11\.0 MB, the server takes at most 10\.0 MB\./,
    );
    // counted in UTF-8 bytes as sent, not in characters
    expect(manualOutputTooLarge("é".repeat(600), 1_000)).not.toBeNull();
    expect(manualOutputTooLarge("e".repeat(600), 1_000)).toBeNull();
    expect(parseManualOutput("x", "text")).toEqual({ value: "x" });
    expect(MAX_BODY_BYTES).toBe(10 * 1024 * 1024);
  });

  it("shows the server's refusal in the dialog and keeps the typed text", async () => {
    const user = userEvent.setup();
    const onSubmit = vi.fn();
    const { rerender } = render(
      <ManualDialog suggestion={suggestion} sending={false} onSubmit={onSubmit} onClose={() => undefined} />,
    );
    await user.type(screen.getByLabelText("Output of the step"), '{{"ok": true}');
    await user.click(screen.getByRole("button", { name: "Record manual result" }));
    expect(onSubmit).toHaveBeenCalledWith({ ok: true });
    rerender(
      <ManualDialog suggestion={suggestion} sending={false} onSubmit={onSubmit} onClose={() => undefined}
        refused="The server refused it as too large (413): too big. Your text is kept." />,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("too large (413)");
    expect(screen.getByLabelText("Output of the step")).toHaveValue('{"ok": true}');
  });
});
