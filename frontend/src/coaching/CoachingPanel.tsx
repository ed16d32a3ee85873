import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { isTerminalStatus } from "../api/types";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { ExecutionControls } from "../control/ExecutionControls";
import { questionGate } from "../control/types";
import { useDocumentTitle } from "../hooks";
import { useAuth } from "../auth/useAuth";
import { useSocketEvent } from "../realtime/context";
import { coachingKeys, fetchQueue } from "./api";
import { DecisionBar } from "./DecisionBar";
import { DecisionDialogs } from "./DecisionDialogs";
import { FinishedNotice } from "./FinishedNotice";
import { ShortcutSheet } from "./ShortcutSheet";
import { StatsPanel } from "./StatsPanel";
import { StepTimeline } from "./StepTimeline";
import { SuggestionView } from "./SuggestionView";
import { isToolCall, stepName, type FlashNotice } from "./types";
import { useAnnouncer } from "./useAnnouncer";
import { useCoachingSession } from "./useCoachingSession";
import { usePanelDecisions } from "./usePanelDecisions";
import { useShortcuts } from "./useShortcuts";
import { UndoBar } from "./UndoBar";
import { WaitingNotice } from "./WaitingNotice";
import { AgentTranscript } from "../agent/AgentTranscript";
import { RunHistory, historyVersion } from "../recovery/RunHistory";
import "./coaching.css";

type DecidedEvent = { execution_id: string; suggestion_id: string; step_id: string; decision: string; by: string;
  held_until: string | null; check?: { result: "miss" | "catch" | null; param: string } };

const DECIDED_WORDS: Record<string, string> = {
  accept: "accepted", reject: "rejected", correct: "corrected", manual: "did by hand", skip: "skipped",
};

/** The operator's view of one coaching execution: suggestion, decisions, steps and live stats. */
export function CoachingPanel({ executionId }: { executionId: string }) {
  const navigate = useNavigate();
  const { execution, pending, stats, metrics, connection } = useCoachingSession(executionId);
  const [notice, setNotice] = useState<FlashNotice | null>(null);
  const { announcement, announce } = useAnnouncer();
  const { user } = useAuth();

  // A colleague decided a suggestion of this run (their panel, the queue, Slack, the API): say who and what, since
  // the next suggestion replaces the one on screen (api.md `suggestion_decided`).
  useSocketEvent<DecidedEvent>("suggestion_decided", (e) => {
    if (e?.execution_id !== executionId || !e.by || e.by === user?.email) return;
    const text = e.check
      ? `${e.by} ${DECIDED_WORDS[e.decision] ?? e.decision} a check of step ${e.step_id} (${e.check.param} changed; ${
          e.check.result === "miss" ? "missed" : e.check.result === "catch" ? "caught" : "no outcome"}): nothing ran.`
      : `${e.by} ${DECIDED_WORDS[e.decision] ?? e.decision} the suggestion for step ${e.step_id}${
          e.held_until ? " (held for its undo window)" : ""}.`;
    setNotice({ tone: "info", text });
    announce(text);
  });

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

  const shownId = suggestion?.suggestion_id ?? null;
  useEffect(() => {
    if (finished) announce(`Execution ${statusLabel(status).toLowerCase()}.`);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- said once when it finishes, not when `announce` changes
  }, [finished, status]);

  // When the control that had focus went away with the old suggestion, focus the new content rather
  // than leaving it on the page's body (where screen readers lose their place).
  useEffect(() => {
    const active = document.activeElement;
    // #main is where a closing dialog leaves focus when its opener went with the suggestion: lost, too
    if (active && active !== document.body && active.id !== "main") return;
    document.getElementById(finished ? "finished-heading" : "suggestion-heading")?.focus();
  }, [shownId, finished]);

  const {
    decision, confirmation, dialog, setDialog, refused, clearRefused, sendingShown, decide, start, confirmArmed,
    held, heldName, undoBusy, takeBack, pauseBusy, togglePause,
  } = usePanelDecisions({
    executionId,
    suggestion,
    execution: execution.data,
    waitsForAnswer: Boolean(question),
    paused,
    canPause,
    announce,
    setNotice,
  });

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
            <SuggestionView
              suggestion={suggestion}
              paused={paused}
              sending={decision.showSending}
              confirming={confirmation.armed}
              pauseBusy={pauseBusy}
              canPause={canPause}
              onDecide={(kind) => start(kind, true)}
              onCancelConfirm={confirmation.cancel}
              onConfirm={confirmArmed}
              onTogglePause={togglePause}
              onHelp={() => setDialog("help")}
            />
          ) : held ? (
            <UndoBar
              decision={held.decision ?? ""}
              stepName={heldName}
              deadline={held.deadline}
              operator={held.operator}
              busy={undoBusy}
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
                  pauseBusy={pauseBusy}
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
      <DecisionDialogs
        dialog={dialog}
        suggestion={suggestion}
        sending={sendingShown}
        serverError={decision.error}
        refused={refused}
        onDecide={decide}
        onClearRefused={clearRefused}
        onClose={() => setDialog(null)}
      />
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
