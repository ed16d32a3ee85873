import { useEffect, useState, type Dispatch, type SetStateAction } from "react";
import { ApiError } from "../api/client";
import { EDITABLE_KINDS, type Approval, type ApprovalDecisionKind } from "../approvals/types";
import { refusalText, useApprovalDecision } from "../approvals/useApprovals";
import { useApprovalUndo } from "../approvals/useApprovalUndo";
import { approvalPrompt, confirmPrompt, needsConfirmation, useConfirmation } from "./confirmation";
import { stepName, type FlashNotice, type QueueItem } from "./types";
import { useQueueSuggestionAccept } from "./useQueueSuggestionAccept";
import { useUndoChord } from "./useUndo";

export type QueueDialog = "reject" | "edit" | "help" | null;

/** Why `a` cannot accept a queued suggestion, as its panel would say it (decisions.ts), or null. */
function cannotAccept(item: QueueItem): string | null {
  if (item.execution_status === "paused") return "Its session is paused: press Enter to open its panel, and resume it there (p).";
  if (item.purpose === "correction") {
    return "This step was rejected: it takes a correction, a manual result or a skip. Press Enter to open its panel.";
  }
  return null;
}

const DONE: Record<ApprovalDecisionKind, string> = { approve: "Approved", reject: "Rejected", edit: "Edited and approved" };

/**
 * The queue's decisions on the selected row: on an approval a, r and e (approving takes a confirming key:
 * confirmation.ts, every approval is a checkpoint), the reject and edit dialogs, and taking back a held decision
 * (z, Ctrl+Z); on a suggestion a accepts it as its panel would (a risky call takes the confirming key there too).
 */
export function useQueueApprovalDecisions({
  selectedApproval,
  selectedSuggestion = null,
  selectedKey,
  nothingToDecide,
  setNotice,
  selectApproval,
}: {
  selectedApproval: Approval | null;
  /** The selected suggestion, if a suggestion's row is selected. */
  selectedSuggestion?: QueueItem | null;
  /** The selected row's key: moving the selection drops an armed approve. */
  selectedKey: string | undefined;
  /** The queue has no row at all. */
  nothingToDecide: boolean;
  setNotice: Dispatch<SetStateAction<FlashNotice | null>>;
  selectApproval: (approval: Approval) => void;
}) {
  const decision = useApprovalDecision();
  const undo = useApprovalUndo();
  const [dialog, setDialog] = useState<QueueDialog>(null);
  const [dialogApproval, setDialogApproval] = useState<Approval | null>(null);

  const send = (approval: Approval, kind: ApprovalDecisionKind, extra: { comment?: string; params?: Record<string, unknown> } = {}) => {
    if (decision.isPending) return;
    setNotice(null);
    decision.mutate(
      { approval, body: { decision: kind, comment: extra.comment || null, ...(extra.params ? { params: extra.params } : {}) } },
      {
        onSuccess: (result) => {
          setDialog(null);
          const after = result?.approval;
          const still = after && after.status === "pending" ? ` It waits for more approvals (${after.approvals ?? 0} of ${after.quorum}).` : "";
          // held for its undo window: the undo bar says what was decided, one banner rather than two
          const held = result?.execution?.gate?.kind === "held" && result.execution.gate.approval_id === approval.approval_id;
          const what = (approval.message || "the approval").replace(/[?.!]\s*$/, "");
          setNotice(held ? null : { tone: "info", text: `${DONE[kind]}: ${what}.${still}` });
          undo.remember(approval, result);
        },
        onError: (error) => {
          if (kind === "edit" && error instanceof ApiError && error.status === 422) return; // shown on the fields
          setDialog(null);
          setNotice({ tone: "error", text: refusalText(error) });
        },
      },
    );
  };

  // approving takes a confirming key; moving the selection drops it
  const confirmation = useConfirmation<"approve" | "accept">();
  const accept = useQueueSuggestionAccept(setNotice);
  const cancelConfirmation = confirmation.cancel;
  useEffect(() => cancelConfirmation(), [selectedKey, cancelConfirmation]);
  // the armed button takes focus, so that Enter confirms even when another button had it
  const armedPrompt = confirmation.armed?.prompt;
  useEffect(() => {
    if (armedPrompt) document.querySelector<HTMLButtonElement>(".decision-bar__button--armed")?.focus();
  }, [armedPrompt]);

  /** a / r / e: act on the selected approval; on a suggestion they say where its decisions are. */
  const act = (key: "a" | "r" | "e", viaButton = false) => {
    if (decision.isPending || accept.isPending) return;
    // a click on the armed Approve button confirms it (a key press of a again does not)
    const confirmed = viaButton && key === "a" ? confirmation.take(selectedApproval?.approval_id) : null;
    confirmation.cancel();
    if (!selectedApproval && selectedSuggestion && key === "a") {
      const why = cannotAccept(selectedSuggestion);
      if (why) {
        setNotice({ tone: "info", text: why });
        return;
      }
      // accepted as the panel would: a risky call (external, destructive, flagged by the policy) is confirmed first
      if (needsConfirmation("accept", selectedSuggestion)) {
        confirmation.arm({
          action: "accept",
          target: selectedSuggestion.suggestion_id,
          prompt: confirmPrompt("accept", stepName(selectedSuggestion), selectedSuggestion),
        });
      } else {
        setNotice(null);
        accept.mutate(selectedSuggestion);
      }
      return;
    }
    if (!selectedApproval) {
      setNotice({
        tone: "info",
        text: nothingToDecide ? "There is nothing to decide." :
          selectedSuggestion
            ? "On a suggestion, a accepts it; to reject, correct or do it by hand, press Enter to open its coaching panel."
            : "a, r and e decide approvals. Press Enter to open the selected row.",
      });
      return;
    }
    if (confirmed) send(selectedApproval, "approve");
    else if (key === "a") {
      confirmation.arm({ action: "approve", target: selectedApproval.approval_id, prompt: approvalPrompt(selectedApproval) });
    } else if (key === "e" && !EDITABLE_KINDS.includes(selectedApproval.kind)) {
      setNotice({ tone: "info", text: "Only a tool call's params can be edited; approve (a) or reject (r) this one." });
    } else {
      decision.reset();
      setDialogApproval(selectedApproval);
      setDialog(key === "r" ? "reject" : "edit");
    }
  };

  /** Enter while an approve is armed: it is sent if it is still for the selected approval. */
  const confirmArmed = () => {
    const armed = confirmation.take(selectedApproval?.approval_id ?? selectedSuggestion?.suggestion_id);
    if (armed?.action === "approve" && selectedApproval) send(selectedApproval, "approve");
    else if (armed?.action === "accept" && selectedSuggestion && !accept.isPending) {
      setNotice(null);
      accept.mutate(selectedSuggestion);
    }
  };

  const takeBack = () =>
    undo.takeBack({
      onSuccess: () => {
        setNotice({ tone: "info", text: "Taken back: the approval waits for a decision again." });
        if (undo.held) selectApproval(undo.held.approval);
      },
      onError: (error) => setNotice({ tone: "error", text: `It could not be taken back: ${refusalText(error)}` }),
    });
  useUndoChord(takeBack, undo.held !== null);

  return {
    /** The decision on its way (`isPending`, the answer's `error`). */
    decision,
    /** `a` on a suggestion: its accept on its way. */
    accept,
    undo,
    confirmation,
    dialog,
    setDialog,
    /** The approval the reject or edit dialog decides. */
    dialogApproval,
    send,
    act,
    confirmArmed,
    takeBack,
  };
}
