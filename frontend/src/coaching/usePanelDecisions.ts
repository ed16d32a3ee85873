import { useEffect, useRef, useState, type Dispatch, type SetStateAction } from "react";
import { ApiError, errorMessage } from "../api/client";
import { confirmPrompt, needsConfirmation, useConfirmation } from "./confirmation";
import { NO_SUGGESTION, STALE_MESSAGE, unavailableReason } from "./decisions";
import { stepName, type CoachingExecution, type DecisionKind, type DecisionRequest, type FlashNotice, type Suggestion } from "./types";
import { isStaleDecision, useDecision, usePauseToggle } from "./useDecision";
import { useUndo, useUndoChord } from "./useUndo";

/** What a decision carries besides its kind and suggestion (a correction, feedback, a manual result). */
export type DecisionExtra = Omit<DecisionRequest, "suggestion_id" | "decision">;

export type DialogName = "reject" | "manual" | "correct" | "help" | null;
/** An open dialog, and the suggestion a decision dialog decides (null for the shortcut sheet). */
type OpenDialog = { name: Exclude<DialogName, null>; suggestionId: string | null } | null;

const DONE: Record<DecisionKind, string> = {
  accept: "Accepted",
  reject: "Rejected",
  correct: "Corrected",
  manual: "Recorded the manual result of",
  skip: "Skipped",
};

/** What the panel shows that its decisions depend on, and where they report. */
export interface PanelDecisionsInput {
  executionId: string;
  /** The suggestion shown, if any. */
  suggestion: Suggestion | null;
  execution: CoachingExecution | undefined;
  /** The execution waits for an answer to a question first (a suggestion waits behind it). */
  waitsForAnswer: boolean;
  paused: boolean;
  canPause: boolean;
  announce: (text: string) => void;
  setNotice: Dispatch<SetStateAction<FlashNotice | null>>;
}

/**
 * The operator's decisions on the panel, and their races with the server's pushes: the decision keys (risky ones
 * armed first), the dialogs that ask before a decision, a decision made while the previous one's answer is on its
 * way, taking back a held decision (z), and pausing the session (p).
 */
export function usePanelDecisions({
  executionId,
  suggestion,
  execution,
  waitsForAnswer,
  paused,
  canPause,
  announce,
  setNotice,
}: PanelDecisionsInput) {
  const decision = useDecision(executionId);
  const pauseToggle = usePauseToggle(executionId);
  const confirmation = useConfirmation<DecisionKind>();
  const undo = useUndo(executionId);
  const [openDialog, setOpenDialog] = useState<OpenDialog>(null);
  const [refused, setRefused] = useState<string | null>(null); // the server's 413 on a manual output

  // A decision dialog belongs to the suggestion it was opened for: it is shown only while that one is, and only its
  // own decision's answer closes it (the next suggestion may come, and its dialog open, before that answer does).
  const shownId = suggestion?.suggestion_id ?? null;
  const dialog: DialogName =
    openDialog && (openDialog.suggestionId === null || openDialog.suggestionId === shownId) ? openDialog.name : null;
  const setDialog = (name: DialogName) =>
    setOpenDialog(name ? { name, suggestionId: name === "help" ? null : shownId } : null);
  const closeDialogFor = (suggestionId: string) =>
    setOpenDialog((open) => (open?.suggestionId === suggestionId ? null : open));

  // A suggestion replaced under an open decision dialog: that decision would be stale, so close it.
  const previousId = useRef(shownId);
  useEffect(() => {
    if (previousId.current === shownId) return;
    const replaced = previousId.current;
    previousId.current = shownId;
    confirmation.cancel(); // a confirming key confirms only the suggestion it was asked for
    // a key pressed a moment too early (the next suggestion was on its way) said there was none: no longer true
    if (suggestion) setNotice((shown) => (shown?.text === NO_SUGGESTION ? null : shown));
    if (suggestion) announce(`New suggestion: ${stepName(suggestion)}, tool ${suggestion.tool ?? "none"}.`);
    // (a dialog whose own decision is on its way was not replaced: it was decided)
    if (replaced !== null && openDialog?.suggestionId === replaced && decision.sendingFor !== replaced) {
      setOpenDialog(null);
      setNotice({ tone: "info", text: STALE_MESSAGE });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a change of the shown suggestion counts, not the dialog or the mutation changing
  }, [shownId]);

  // A decision on the next suggestion made while the previous decision's answer is still on its way (the server
  // pushes the next suggestion before it answers, and a loaded machine may draw it first): kept, and sent as soon
  // as that answer is in, if the suggestion is still the one shown. Never dropped, never two on the wire at once.
  const queued = useRef<{ suggestionId: string; kind: DecisionKind; extra: DecisionExtra } | null>(null);
  const decide = (kind: DecisionKind, extra: DecisionExtra = {}) => {
    if (!suggestion) return;
    if (decision.isPending) {
      if (decision.sendingFor !== suggestion.suggestion_id) {
        queued.current = { suggestionId: suggestion.suggestion_id, kind, extra };
      }
      return;
    }
    queued.current = null;
    const sent = suggestion;
    setNotice(null);
    decision.send(
      { suggestion_id: sent.suggestion_id, decision: kind, ...extra },
      {
        onSuccess: (result) => {
          closeDialogFor(sent.suggestion_id);
          // a check suggestion (docs/autonomy.md "Check suggestions"): nothing ran; say so, what it changed, and
          // whether it was caught; the real suggestion follows
          if (result?.check) {
            setNotice({ tone: "info", text: result.check.message });
            announce(result.check.message);
            return;
          }
          const heldUntil = result?.decision?.held_until;
          announce(heldUntil ? `${DONE[kind]} ${stepName(sent)}: held before it acts; press z to take it back.`
                             : `${DONE[kind]} ${stepName(sent)}.`);
        },
        onError: (error) => {
          if (error instanceof ApiError && error.status === 422 && kind === "correct") return; // on the fields
          // a correction the policy denies: the editor stays open with what was typed, the refusal beside the field
          if (error instanceof ApiError && error.code === "policy_denied" && kind === "correct") return;
          if (error instanceof ApiError && error.status === 413 && kind === "manual") {
            // the dialog stays open with the typed output, and says why
            setRefused(`The server refused it as too large (413): ${errorMessage(error)}. Your text is kept.`);
            return;
          }
          closeDialogFor(sent.suggestion_id);
          if (isStaleDecision(error)) setNotice({ tone: "error", text: STALE_MESSAGE });
          else setNotice({ tone: "error", text: `The decision was not applied: ${errorMessage(error)}` });
        },
      },
    );
  };

  // the shown suggestion's own decision is on its way (a dialog waits for its answer)
  const sendingShown = decision.isPending && decision.sendingFor === shownId;
  useEffect(() => {
    const waiting = queued.current;
    if (decision.isPending || !waiting) return;
    queued.current = null;
    if (waiting.suggestionId === shownId) decide(waiting.kind, waiting.extra);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- sent when the answer before it is in (or the suggestion changes), with the `decide` of now
  }, [decision.isPending, shownId]);

  /**
   * A decision key or button: accept and skip go at once (or once the previous answer is in), the others ask first.
   * Accept and skip on a risky call arm first (confirmation.ts): Enter, or a click on the armed button, sends it.
   */
  const start = (kind: DecisionKind, viaButton = false) => {
    if (sendingShown) return; // this one is on its way
    const armedFor = confirmation.armed;
    if (armedFor && !(armedFor.action === kind && armedFor.target === shownId)) confirmation.cancel();
    const reason = waitsForAnswer
      ? "The execution waits for an answer first: answer it (i), or edit the step (e)."
      : unavailableReason(kind, suggestion, paused);
    if (reason) {
      setNotice({ tone: "info", text: reason });
      return;
    }
    if (kind === "reject") setDialog("reject");
    else if (kind === "manual") setDialog("manual");
    else if (kind === "correct") {
      if (!decision.isPending) decision.reset(); // clears a refused correction's field errors, not a decision on its way
      setDialog("correct");
    } else if (suggestion && needsConfirmation(kind, suggestion)) {
      if (viaButton && confirmation.take(suggestion.suggestion_id)?.action === kind) decide(kind);
      else {
        const verb = kind === "accept" ? "accept" : "skip";
        confirmation.arm({ action: kind, target: suggestion.suggestion_id, prompt: confirmPrompt(verb, stepName(suggestion), suggestion) });
      }
    } else decide(kind);
  };

  // The prompt may be below the fold (a long suggestion): bring it into view, and focus the armed button, so that
  // Enter confirms even when focus was on another control (Enter would have pressed that one).
  const armedPrompt = confirmation.armed?.prompt;
  useEffect(() => {
    if (!armedPrompt) return;
    document.getElementById("confirm-prompt")?.scrollIntoView?.({ block: "nearest" });
    document.querySelector<HTMLButtonElement>(".decision-bar__button--armed")?.focus();
  }, [armedPrompt]);

  const confirmArmed = () => {
    const armed = confirmation.take(shownId);
    if (armed) decide(armed.action);
  };

  // a decision on a risky call held for its undo window (the execution's gate): z or Ctrl+Z takes it back
  const held = execution?.gate?.kind === "held" ? execution.gate : null;
  const heldStep = held ? execution?.steps.find((st) => st.step_id === held.step_id) : undefined;
  const heldName = heldStep?.name || held?.step_id || "";
  // z pressed while the decision's own answer is on its way (the push that shows it held may come first): sent once
  // that answer is in, or the answer, coming after the undo's, would take the suggestion off the panel again
  const undoAfterDecision = useRef(false);
  const takeBack = () => {
    const suggestionId = held?.suggestion_id;
    if (!suggestionId || undo.isPending) return;
    if (decision.isPending) {
      undoAfterDecision.current = true;
      return;
    }
    undoAfterDecision.current = false;
    undo.mutate(suggestionId, {
      onSuccess: () => {
        setNotice(null);
        announce(`Taken back: ${heldName} waits for your decision again.`);
      },
      onError: (error) => setNotice({ tone: "error", text: `It could not be taken back: ${errorMessage(error)}` }),
    });
  };
  useUndoChord(takeBack, held !== null);
  useEffect(() => {
    if (!decision.isPending && undoAfterDecision.current) takeBack();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- taken back once the decision's answer is in, with the `takeBack` of now
  }, [decision.isPending]);

  const togglePause = () => {
    if (!canPause || pauseToggle.isPending) return;
    const action = paused ? "resume" : "pause";
    pauseToggle.mutate(action, {
      onSuccess: () => {
        setNotice(null);
        announce(action === "pause" ? "Session paused." : "Session resumed.");
      },
      onError: (error) => setNotice({ tone: "error", text: `Could not ${action} the session: ${errorMessage(error)}` }),
    });
  };

  return {
    /** The decision on its way (`showSending`, the answer's `error`). */
    decision,
    confirmation,
    shownId,
    dialog,
    setDialog,
    /** Why the server refused the manual dialog's output (413), shown in that dialog. */
    refused,
    clearRefused: () => setRefused(null),
    sendingShown,
    decide,
    start,
    confirmArmed,
    held,
    heldName,
    undoBusy: undo.isPending,
    takeBack,
    pauseBusy: pauseToggle.isPending,
    togglePause,
  };
}
