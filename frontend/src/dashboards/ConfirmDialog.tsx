import { useId, type ReactNode } from "react";
import { Dialog } from "../components/Dialog";

/**
 * A modal confirmation (the app's `Dialog`): focus starts on Cancel, so a
 * stray Enter never confirms (promote, demote…); Escape cancels, except while
 * the action is under way.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  cancelLabel = "Cancel",
  busy = false,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** The button that leaves things as they are: say what it keeps where "Cancel" would be ambiguous. */
  cancelLabel?: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const bodyId = useId();
  return (
    <Dialog
      title={title}
      onClose={() => !busy && onCancel()}
      describedBy={bodyId}
      closeButton={false}
      initialFocus="[data-dialog-cancel]"
    >
      <div id={bodyId}>{children}</div>
      <div className="dialog__actions">
        {/* aria-disabled, not disabled, while busy: focus starts here and a disabled button would drop it */}
        <button
          type="button"
          className="button button--secondary"
          data-dialog-cancel
          onClick={() => !busy && onCancel()}
          aria-disabled={busy || undefined}
        >
          {cancelLabel}
        </button>
        <button
          type="button"
          className="button"
          data-dialog-confirm
          onClick={() => !busy && onConfirm()}
          aria-busy={busy || undefined}
        >
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
