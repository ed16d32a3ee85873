import { useId, type ReactNode } from "react";
import { Dialog } from "../components/Dialog";
import { FailureNotice } from "../components/QueryState";

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

/**
 * A ConfirmDialog whose confirmation runs a mutation (revoke, delete…): it closes when that succeeds and says
 * inside why it failed otherwise.
 */
export function ConfirmMutation<V>({
  title,
  confirmLabel,
  mutation,
  variables,
  failure,
  onClose,
  children,
}: {
  title: string;
  confirmLabel: string;
  mutation: {
    isPending: boolean;
    isError: boolean;
    error: unknown;
    mutate: (variables: V, options: { onSuccess: () => void }) => void;
  };
  /** What the mutation is run with. */
  variables: V;
  /** Leads the failure's message ("Not revoked"). */
  failure: string;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <ConfirmDialog
      title={title}
      confirmLabel={confirmLabel}
      busy={mutation.isPending}
      onCancel={onClose}
      onConfirm={() => mutation.mutate(variables, { onSuccess: onClose })}
    >
      {children}
      <FailureNotice mutation={mutation} what={failure} />
    </ConfirmDialog>
  );
}
