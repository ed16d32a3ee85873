import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Execution } from "../api/types";
import { useIsLead } from "../auth/useAuth";
import { RerunDialog } from "./RecoveryDialogs";
import "./recovery.css";

/** An execution that completed or was cancelled: "Re-run…" starts its workflow again (same or edited variables). */
export function RerunNotice({ execution, onMessage }: { execution: Execution; onMessage?: (message: string) => void }) {
  const queryClient = useQueryClient();
  const isLead = useIsLead();
  const [open, setOpen] = useState(false);
  // a normal run skips the review the workflow is under: re-running one needs a lead, as starting one does
  if (execution.mode === "normal" && !isLead) return null;
  return (
    <p className="rerun">
      <button type="button" className="button button--secondary" onClick={() => setOpen(true)}>
        Re-run…
      </button>{" "}
      <span className="muted">a new execution of this workflow, with the same or changed variables</span>
      {open ? (
        <RerunDialog
          execution={execution}
          onDone={(message) => {
            setOpen(false);
            void queryClient.invalidateQueries({ queryKey: ["executions"] });
            onMessage?.(message);
          }}
          onClose={() => setOpen(false)}
        />
      ) : null}
    </p>
  );
}
