import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { Dialog } from "./Dialog";

describe("Dialog", () => {
  it("focuses its first field, closes on Esc and gives focus back to its opener", async () => {
    const user = userEvent.setup();
    const onClose = vi.fn();
    const { rerender } = render(<button type="button">Open</button>);
    screen.getByRole("button", { name: "Open" }).focus();
    rerender(
      <>
        <button type="button">Open</button>
        <Dialog title="Say it" onClose={onClose}>
          <input aria-label="Text" />
        </Dialog>
      </>,
    );
    expect(screen.getByRole("dialog", { name: "Say it" })).toBeInTheDocument();
    expect(screen.getByLabelText("Text")).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(onClose).toHaveBeenCalledTimes(1);
    rerender(<button type="button">Open</button>);
    expect(screen.getByRole("button", { name: "Open" })).toHaveFocus();
  });

  it("as a confirmation: no Close button, Esc cancels except while busy", async () => {
    const user = userEvent.setup();
    const onCancel = vi.fn();
    const { rerender } = render(
      <ConfirmDialog title="Sure?" confirmLabel="Do it" onConfirm={() => undefined} onCancel={onCancel}>
        <p>It cannot be undone.</p>
      </ConfirmDialog>,
    );
    const dialog = screen.getByRole("dialog", { name: "Sure?" });
    expect(dialog).toHaveAccessibleDescription("It cannot be undone.");
    // focus on Cancel: a stray Enter never confirms
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();
    expect(screen.queryByRole("button", { name: /Close/ })).not.toBeInTheDocument();
    rerender(
      <ConfirmDialog title="Sure?" confirmLabel="Do it" busy onConfirm={() => undefined} onCancel={onCancel}>
        <p>It cannot be undone.</p>
      </ConfirmDialog>,
    );
    await user.keyboard("{Escape}");
    expect(onCancel).not.toHaveBeenCalled();
    rerender(
      <ConfirmDialog title="Sure?" confirmLabel="Do it" onConfirm={() => undefined} onCancel={onCancel}>
        <p>It cannot be undone.</p>
      </ConfirmDialog>,
    );
    await user.keyboard("{Escape}");
    expect(onCancel).toHaveBeenCalledTimes(1);
  });
});
