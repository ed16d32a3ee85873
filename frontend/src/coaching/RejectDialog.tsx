import { useId, useState, type FormEvent } from "react";
import { Dialog } from "./Dialog";
import type { Suggestion } from "./types";

/** `r`: asks why the suggestion is wrong, then rejects it with that feedback. */
export function RejectDialog({
  suggestion,
  sending,
  onSubmit,
  onClose,
}: {
  suggestion: Suggestion;
  sending: boolean;
  onSubmit: (feedback: string) => void;
  onClose: () => void;
}) {
  const [feedback, setFeedback] = useState("");
  const [missing, setMissing] = useState(false);
  const hintId = useId();
  const errorId = useId();

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (!feedback.trim()) {
      setMissing(true);
      return;
    }
    onSubmit(feedback.trim());
  };

  return (
    <Dialog title={`Reject step ${suggestion.step_name || suggestion.step_id}`} onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="reject-feedback">Why is this suggestion wrong?</label>
          <p id={hintId} className="muted field__hint">
            Sent as feedback with the rejection. Ctrl+Enter sends.
          </p>
          <textarea
            id="reject-feedback"
            rows={4}
            value={feedback}
            aria-describedby={missing ? `${hintId} ${errorId}` : hintId}
            aria-invalid={missing || undefined}
            onChange={(e) => {
              setFeedback(e.target.value);
              if (e.target.value.trim()) setMissing(false);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
            }}
          />
          {missing ? (
            <p id={errorId} className="field__error" role="alert">
              ✕ Write what is wrong, so Coach can learn from it.
            </p>
          ) : null}
        </div>
        <div className="dialog__actions">
          <button type="submit" className="button button--danger" disabled={sending}>
            {sending ? "Rejecting…" : "Reject with feedback"}
          </button>
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
