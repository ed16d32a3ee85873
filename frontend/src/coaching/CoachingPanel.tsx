import { useQuery } from "@tanstack/react-query";
import { Suspense, lazy, useCallback, useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import { isTerminalStatus } from "../api/types";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { ExecutionControls } from "../control/ExecutionControls";
import { questionGate } from "../control/types";
import { useDocumentTitle } from "../hooks";
import { coachingKeys, fetchQueue } from "./api";
import { DecisionBar } from "./DecisionBar";
import { Dialog } from "../components/Dialog";
import { FinishedNotice } from "./FinishedNotice";
import { ManualDialog } from "./ManualDialog";
import { RejectDialog } from "./RejectDialog";
import { ShortcutSheet } from "./ShortcutSheet";
import { StatsPanel } from "./StatsPanel";
import { StepTimeline } from "./StepTimeline";
import { SuggestionCard } from "./SuggestionCard";
import { confirmPrompt, needsConfirmation, useConfirmation } from "./confirmation";
import { ConfirmPrompt } from "./ConfirmPrompt";
import { NO_SUGGESTION, STALE_MESSAGE, unavailableReason } from "./decisions";
import type { DecisionKind, DecisionRequest, Suggestion } from "./types";
import { useCoachingSession } from "./useCoachingSession";
import { isStaleDecision, useDecision, usePauseToggle } from "./useDecision";
import { useShortcuts } from "./useShortcuts";
import { useUndo, useUndoChord } from "./useUndo";
import { UndoBar } from "./UndoBar";
import { WaitingNotice } from "./WaitingNotice";
import { AgentTranscript } from "../agent/AgentTranscript";
import { RunHistory, historyVersion } from "../recovery/RunHistory";
import { isToolCall } from "./types";
import "./coaching.css";

/** What a decision carries besides its kind and suggestion (a correction, feedback, a manual result). */
type DecisionExtra = Omit<DecisionRequest, "suggestion_id" | "decision">;

// rjsf is large: the editor is its own chunk, fetched the first time `c` is pressed.
const CorrectionEditor = lazy(() => import("./CorrectionEditor"));

type DialogName = "reject" | "manual" | "correct" | "help" | null;
/** An open dialog, and the suggestion a decision dialog decides (null for the shortcut sheet). */
type OpenDialog = { name: Exclude<DialogName, null>; suggestionId: string | null } | null;
type Notice = { tone: "error" | "info"; text: string };

const DONE: Record<DecisionKind, string> = {
  accept: "Accepted",
  reject: "Rejected",
  correct: "Corrected",
  manual: "Recorded the manual result of",
  skip: "Skipped",
};

const stepName = (s: Suggestion) => s.step_name || s.step_id;

/** Announcements this close together are read as one. */
const ANNOUNCE_TOGETHER_MS = 1_500;

/** The operator's view of one coaching execution: suggestion, decisions, steps and live stats. */
export function CoachingPanel({ executionId }: { executionId: string }) {
  const navigate = useNavigate();
  const { execution, pending, stats, metrics, connection } = useCoachingSession(executionId);
  const decision = useDecision(executionId);
  const pauseToggle = usePauseToggle(executionId);
  const confirmation = useConfirmation<DecisionKind>();
  const undo = useUndo(executionId);
  const [openDialog, setOpenDialog] = useState<OpenDialog>(null);
  const [refused, setRefused] = useState<string | null>(null); // the server's 413 on a manual output
  const [notice, setNotice] = useState<Notice | null>(null);
  const [announcement, setAnnouncement] = useState("");
  // A decision's ack and the next suggestion's push arrive together: say both, in order of arrival.
  const lastAnnounced = useRef(0);
  const announce = (text: string) => {
    const now = Date.now();
    const together = now - lastAnnounced.current < ANNOUNCE_TOGETHER_MS;
    lastAnnounced.current = now;
    setAnnouncement((previous) => (together && previous ? `${previous} ${text}` : text));
  };

  // Stable, so that the memoized parts (steps, stats, controls) are not drawn again for every push about the session.
  const showControlMessage = useCallback((text: string) => setNotice({ tone: "info", text }), []);
  const { refetch: refetchMetrics } = metrics;
  const retryMetrics = useCallback(() => void refetchMetrics(), [refetchMetrics]);

  const suggestion = pending.data?.suggestion ?? null;
  const status = execution.data?.status ?? pending.data?.status ?? "";
  const paused = pending.data?.paused ?? status === "paused";
  const finished = isTerminalStatus(status) && !suggestion;
  // a question (a human_input step, a pause for clarification) comes first: a suggestion waits behind it
  const question = execution.data ? questionGate(execution.data) : null;
  const canPause = !isTerminalStatus(status) && (execution.data?.mode === "coaching" || execution.data?.mode === "auto");
  const workflowName = metrics.data?.name ?? execution.data?.workflow_id ?? "";
  useDocumentTitle(workflowName ? `Coaching ${workflowName}` : "Coaching");

  const queue = useQuery({
    queryKey: coachingKeys.queue(1),
    queryFn: ({ signal }) => fetchQueue(1, signal),
    enabled: finished,
  });
  const next = queue.data?.items.find((item) => item.execution_id !== executionId) ?? null;
  const goNext = () =>
    navigate(next ? `/executions/${encodeURIComponent(next.execution_id)}/coach` : "/queue");

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
    // Only a change of the shown suggestion counts, not the dialog or the mutation changing.
  }, [shownId]);

  useEffect(() => {
    if (finished) announce(`Execution ${statusLabel(status).toLowerCase()}.`);
  }, [finished, status]);

  // When the control that had focus went away with the old suggestion, focus the new content rather
  // than leaving it on the page's body (where screen readers lose their place).
  useEffect(() => {
    const active = document.activeElement;
    // #main is where a closing dialog leaves focus when its opener went with the suggestion: lost, too
    if (active && active !== document.body && active.id !== "main") return;
    document.getElementById(finished ? "finished-heading" : "suggestion-heading")?.focus();
  }, [shownId, finished]);

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
          const heldUntil = result?.decision?.held_until;
          announce(heldUntil ? `${DONE[kind]} ${stepName(sent)}: held before it acts; press z to take it back.`
                             : `${DONE[kind]} ${stepName(sent)}.`);
        },
        onError: (error) => {
          if (error instanceof ApiError && error.status === 422 && kind === "correct") return; // on the fields
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
  }, [decision.isPending, shownId]);

  /**
   * A decision key or button: accept and skip go at once (or once the previous answer is in), the others ask first.
   * Accept and skip on a risky call arm first (confirmation.ts): Enter, or a click on the armed button, sends it.
   */
  const start = (kind: DecisionKind, viaButton = false) => {
    if (sendingShown) return; // this one is on its way
    const armedFor = confirmation.armed;
    if (armedFor && !(armedFor.action === kind && armedFor.target === shownId)) confirmation.cancel();
    const reason = question
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
  const held = execution.data?.gate?.kind === "held" ? execution.data.gate : null;
  const heldStep = held ? execution.data?.steps.find((st) => st.step_id === held.step_id) : undefined;
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

  useShortcuts({
    a: () => start("accept"),
    r: () => start("reject"),
    c: () => start("correct"),
    m: () => start("manual"),
    s: () => start("skip"),
    p: togglePause,
    "?": () => setDialog("help"),
    ...(finished ? { n: goNext, Enter: goNext } : {}),
    ...(held ? { z: takeBack } : {}),
    ...(confirmation.armed ? { Enter: confirmArmed, Escape: confirmation.cancel } : {}),
  });

  const heading = (
    <h1 id="coach-heading">
      Coaching{workflowName ? `: ${workflowName}` : ""} <span className="mono coach__execution-id">{executionId}</span>
    </h1>
  );

  if (execution.isError || pending.isError) {
    return (
      <section aria-labelledby="coach-heading">
        <BackToQueue />
        {heading}
        <ErrorNotice
          title="Could not load this coaching session"
          error={execution.error ?? pending.error}
          onRetry={() => {
            void execution.refetch();
            void pending.refetch();
          }}
        />
      </section>
    );
  }
  if (!execution.data || !pending.data) {
    return (
      <section aria-labelledby="coach-heading">
        <BackToQueue />
        {heading}
        <Loading label="Loading the coaching session…" />
      </section>
    );
  }

  const data = execution.data;
  // the agent step whose conversation is shown: the one whose call is suggested, else one that runs or waits
  const agentStep =
    data.steps.find((st) => st.type === "agent" && isToolCall(suggestion) && st.step_id === suggestion?.step_id) ??
    data.steps.find((st) => st.type === "agent" && (st.status === "running" || st.status === "waiting")) ??
    null;
  return (
    <section aria-labelledby="coach-heading" className="coach">
      <BackToQueue />
      <div className="page-head">
        {heading}
        <div className="coach__status">
          <StatusBadge status={paused ? "paused" : data.status} />
          <ProgressMeter progress={data.progress} label="Execution progress" />
        </div>
      </div>
      {connection !== "online" ? (
        <p className="notice notice--warning">
          Live updates are paused: decisions go over HTTP and the panel re-reads the server every few seconds.
        </p>
      ) : null}
      <div role="alert" className={notice?.tone === "error" ? "notice notice--error" : "visually-hidden"}>
        {notice?.tone === "error" ? notice.text : null}
      </div>
      {notice?.tone === "info" ? (
        <p className="notice notice--info" role="status">
          {notice.text}
        </p>
      ) : null}
      <p className="visually-hidden" aria-live="polite" data-testid="announcer">
        {announcement}
      </p>

      <div className="coach__layout">
        <div className="coach__main">
          {finished ? (
            <FinishedNotice
              status={data.status}
              hasNext={next !== null}
              onNext={goNext}
              execution={data}
              onMessage={showControlMessage}
            />
          ) : question ? (
            suggestion ? (
              <p className="muted">
                The suggestion for {stepName(suggestion)} waits until this is answered.
              </p>
            ) : null
          ) : suggestion ? (
            <>
              {paused ? (
                <p className="notice notice--warning">
                  <strong>‖ Paused.</strong> Decisions are off until you resume the session (p).
                </p>
              ) : null}
              <SuggestionCard suggestion={suggestion} />
              <DecisionBar
                suggestion={suggestion}
                paused={paused}
                busy={decision.showSending}
                armed={confirmation.armed?.target === shownId ? confirmation.armed.action : null}
                pauseBusy={pauseToggle.isPending}
                canPause={canPause}
                onDecide={(kind) => start(kind, true)}
                onTogglePause={togglePause}
                onHelp={() => setDialog("help")}
              />
              {confirmation.armed ? (
                <ConfirmPrompt prompt={confirmation.armed.prompt} onCancel={confirmation.cancel} />
              ) : null}
              {decision.showSending ? (
                // not a live region: the announcer says the decision once it is applied
                <p className="muted">
                  Sending the decision…
                </p>
              ) : null}
            </>
          ) : held ? (
            <UndoBar
              decision={held.decision ?? ""}
              stepName={heldName}
              deadline={held.deadline}
              operator={held.operator}
              busy={undo.isPending}
              onUndo={takeBack}
            />
          ) : (
            <>
              <WaitingNotice
                status={paused ? "paused" : data.status}
                mode={data.mode}
                executionId={executionId}
                gate={data.gate}
              />
              {canPause ? (
                <DecisionBar
                  suggestion={null}
                  paused={paused}
                  busy={false}
                  pauseBusy={pauseToggle.isPending}
                  canPause={canPause}
                  onDecide={start}
                  onTogglePause={togglePause}
                  onHelp={() => setDialog("help")}
                />
              ) : null}
            </>
          )}
          {finished ? null : (
            <ExecutionControls
              execution={data}
              // the notice is a status region: it speaks once (announcing it too said it twice)
              onMessage={showControlMessage}
            />
          )}
          {agentStep ? (
            <AgentTranscript
              executionId={executionId}
              stepId={agentStep.step_id}
              stepStatus={agentStep.status}
              headingLevel={2}
              highlight={isToolCall(suggestion) ? suggestion?.suggestion_id : null}
            />
          ) : null}
          <StepTimeline steps={data.steps} currentStepId={suggestion?.step_id ?? null} />
          <RunHistory
            executionId={executionId}
            live={!finished}
            version={historyVersion(data)}
            headingLevel={2}
            collapsible
          />
        </div>
        <StatsPanel
          stats={stats.data}
          metrics={metrics.data}
          metricsError={metrics.error}
          onRetryMetrics={retryMetrics}
        />
      </div>

      {dialog === "help" ? <ShortcutSheet onClose={() => setDialog(null)} /> : null}
      {dialog === "reject" && suggestion ? (
        <RejectDialog
          suggestion={suggestion}
          sending={sendingShown}
          onSubmit={(feedback) => decide("reject", { feedback })}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === "manual" && suggestion ? (
        <ManualDialog
          suggestion={suggestion}
          sending={sendingShown}
          onSubmit={(output) => {
            setRefused(null);
            decide("manual", { manual_output: output });
          }}
          onClose={() => {
            setRefused(null);
            setDialog(null);
          }}
          refused={refused}
        />
      ) : null}
      {dialog === "correct" && suggestion ? (
        <Dialog
          title={
            isToolCall(suggestion)
              ? `Correct the arguments of ${suggestion.tool ?? "the call"}`
              : `Correct step ${stepName(suggestion)}`
          }
          onClose={() => setDialog(null)}
          wide
        >
          <Suspense fallback={<Loading label="Loading the correction editor…" />}>
            <CorrectionEditor
              suggestion={suggestion}
              sending={sendingShown}
              serverError={decision.error}
              onSubmit={(params) => decide("correct", { correction: params })}
              onCancel={() => setDialog(null)}
            />
          </Suspense>
        </Dialog>
      ) : null}
    </section>
  );
}

function BackToQueue() {
  return (
    <p className="back">
      <Link to="/queue">← Queue</Link>
    </p>
  );
}
