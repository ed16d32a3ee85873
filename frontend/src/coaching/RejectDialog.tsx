import { useState } from "react";
import { TextDialog, type DecisionDialogProps } from "./TextDialog";

/** `r`: asks why the suggestion is wrong, then rejects it with that feedback. */
export function RejectDialog({
  suggestion,
  sending,
  onSubmit,
  onClose,
}: DecisionDialogProps<string>) {
  const [feedback, setFeedback] = useState("");
  const [missing, setMissing] = useState(false);

  const send = () => {
    if (!feedback.trim()) {
      setMissing(true);
      return;
    }
    onSubmit(feedback.trim());
  };

  return (
    <TextDialog
      title={`Reject step ${suggestion.step_name || suggestion.step_id}`}
      onClose={onClose}
      onSend={send}
      fieldId="reject-feedback"
      label="Why is this suggestion wrong?"
      hint="Sent as feedback with the rejection. Ctrl+Enter sends."
      rows={4}
      value={feedback}
      onChange={(value) => {
        setFeedback(value);
        if (value.trim()) setMissing(false);
      }}
      error={missing ? "Write what is wrong, so Coach can learn from it." : null}
      sendLabel="Reject with feedback"
      sendingLabel="Rejecting…"
      sending={sending}
      danger
    />
  );
}
