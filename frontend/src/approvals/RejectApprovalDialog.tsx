import { useState } from "react";
import type { Approval } from "./types";
import { TextDialog } from "../coaching/TextDialog";

/** `r` on an approval: asks why, then rejects with that comment (one reject rejects the approval). */
export function RejectApprovalDialog({
  approval,
  sending,
  onSubmit,
  onClose,
}: {
  approval: Approval;
  sending: boolean;
  onSubmit: (comment: string) => void;
  onClose: () => void;
}) {
  const [comment, setComment] = useState("");
  const [missing, setMissing] = useState(false);
  return (
    <TextDialog
      title={`Reject: ${approval.message}`}
      onClose={onClose}
      onSend={() => (comment.trim() ? onSubmit(comment.trim()) : setMissing(true))}
      fieldId="approval-reject-comment"
      label="Why do you reject it?"
      hint="Sent as the rejection's comment; the execution fails with it. Ctrl+Enter sends."
      rows={4}
      value={comment}
      onChange={(value) => {
        setComment(value);
        if (value.trim()) setMissing(false);
      }}
      error={missing ? "Write why, so whoever started it knows." : null}
      sendLabel="Reject with comment"
      sendingLabel="Rejecting…"
      sending={sending}
      danger
    />
  );
}
