import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { approvalKeys, undoApproval } from "./api";
import { applyApproval } from "./useApprovals";
import type { Approval, ApprovalDecisionResult } from "./types";

/** Your decision on an approval held for the undo window (docs/web-app.md "Undo"): which, what, until when. */
export interface HeldApproval {
  approval: Approval;
  decision: string;
  deadline: string;
}

/** How long after its window a held decision's bar stays ("It acts now"), for the scanner to release it. */
const SHOWN_AFTER_MS = 1_500;

/**
 * The queue's undo: `remember` keeps a decision's answer when the server held it; `takeBack` (z, Ctrl+Z, the
 * button) sends the undo, and the approval is pending in the list again. The bar goes once the window is over.
 */
export function useApprovalUndo() {
  const queryClient = useQueryClient();
  const [held, setHeld] = useState<HeldApproval | null>(null);
  const mutation = useMutation<ApprovalDecisionResult, unknown, string>({
    mutationFn: (approvalId) => undoApproval(approvalId),
    onSuccess: (result) => {
      setHeld(null);
      if (result?.approval) applyApproval(queryClient, result.approval);
      void queryClient.invalidateQueries({ queryKey: approvalKeys.all });
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
    },
    onError: () => void queryClient.invalidateQueries({ queryKey: approvalKeys.all }),
  });

  useEffect(() => {
    if (!held) return;
    const wait = Math.max(0, Date.parse(held.deadline) - Date.now()) + SHOWN_AFTER_MS;
    const timer = setTimeout(() => setHeld(null), wait);
    return () => clearTimeout(timer);
  }, [held]);

  const remember = useCallback((approval: Approval, result: ApprovalDecisionResult | undefined) => {
    const gate = result?.execution?.gate;
    if (gate?.kind === "held" && gate.deadline && gate.approval_id === approval.approval_id) {
      setHeld({ approval, decision: gate.decision ?? "approve", deadline: gate.deadline });
    } else setHeld(null);
  }, []);
  const { mutate, isPending } = mutation;
  const takeBack = useCallback(
    (options?: { onSuccess?: () => void; onError?: (error: unknown) => void }) => {
      if (!held || isPending) return;
      mutate(held.approval.approval_id, options);
    },
    [held, isPending, mutate],
  );
  return { held, remember, takeBack, isPending };
}
