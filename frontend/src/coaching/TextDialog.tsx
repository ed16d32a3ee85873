import { useId, type FormEvent, type ReactNode } from "react";
import { Dialog } from "../components/Dialog";
import type { Suggestion } from "./types";

/** What a decision's dialog (reject, manual) gets: the suggestion, and what to do with the answer. */
export interface DecisionDialogProps<T> {
  suggestion: Suggestion;
  sending: boolean;
  onSubmit: (answer: T) => void;
  onClose: () => void;
  /** Why the server refused the last answer (e.g. 413 too large), shown in the dialog, the text kept. */
  refused?: string | null;
}

/**
 * A dialog that asks for one text (the reject feedback, the manual output):
 * a labelled textarea with its hint and error, optional more fields, then
 * send and Cancel. Ctrl+Enter (⌘+Enter) in the textarea sends, like the
 * send button.
 */
export function TextDialog({
  title,
  onClose,
  onSend,
  fieldId,
  label,
  hint,
  rows,
  mono = false,
  value,
  onChange,
  error,
  children,
  sendLabel,
  sendingLabel,
  sending,
  danger = false,
}: {
  title: string;
  onClose: () => void;
  /** The form is sent: check `value`, then decide or set `error`. */
  onSend: () => void;
  fieldId: string;
  label: string;
  hint: string;
  rows: number;
  mono?: boolean;
  value: string;
  onChange: (value: string) => void;
  /** What is wrong with `value`, shown under it as an alert. */
  error: string | null;
  /** More fields, after the textarea. */
  children?: ReactNode;
  sendLabel: string;
  sendingLabel: string;
  sending: boolean;
  danger?: boolean;
}) {
  const hintId = useId();
  const errorId = useId();

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    onSend();
  };

  return (
    <Dialog title={title} onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={fieldId}>{label}</label>
          <p id={hintId} className="muted field__hint">
            {hint}
          </p>
          <textarea
            id={fieldId}
            className={mono ? "mono" : undefined}
            rows={rows}
            value={value}
            aria-describedby={error ? `${hintId} ${errorId}` : hintId}
            aria-invalid={error ? true : undefined}
            onChange={(e) => onChange(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
            }}
          />
          {error ? (
            <p id={errorId} className="field__error" role="alert">
              ✕ {error}
            </p>
          ) : null}
        </div>
        {children}
        <div className="dialog__actions">
          <button type="submit" className={danger ? "button button--danger" : "button"} disabled={sending}>
            {sending ? sendingLabel : sendLabel}
          </button>
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
