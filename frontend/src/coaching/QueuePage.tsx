import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import { ApprovalQueue } from "../approvals/ApprovalQueue";
import { EditParamsDialog } from "../approvals/EditParamsDialog";
import { whyNotDecidable } from "../approvals/eligibility";
import { RejectApprovalDialog } from "../approvals/RejectApprovalDialog";
import type { Approval } from "../approvals/types";
import { usePendingApprovals } from "../approvals/useApprovals";
import { useAuth } from "../auth/useAuth";
import { pageFromParams } from "../components/Pager";
import { ErrorNotice } from "../components/QueryState";
import { useDocumentTitle, useMediaQuery } from "../hooks";
import { useRealtime, useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import { QUEUE_CHANGED } from "../realtime/queueChanged";
import { useCoalesced } from "../realtime/useCoalesced";
import { useWorkflowOptions } from "../api/workflowOptions";
import { coachingKeys, fetchQuestions, fetchQueue } from "./api";
import { ConfirmPrompt, useTouchScreen } from "./ConfirmPrompt";
import { QueueFilterBar } from "./QueueFilterBar";
import { AnswerDialog, QuestionList } from "./QuestionList";
import { apiQuery, apiQueryParams, approvalMatches, filtersFromParams, isFiltered, paramsOf, shows, type QueueFilters } from "./queueFilters";
import { ShortcutSheet } from "./ShortcutSheet";
import { SuggestionList } from "./SuggestionList";
import type { FlashNotice, Question, QueueItem } from "./types";
import { OFFLINE_POLL_MS } from "./useCoachingSession";
import { useQueueApprovalDecisions } from "./useQueueApprovalDecisions";
import { useQueueSelection, type Entry } from "./useQueueSelection";
import { useShortcuts } from "./useShortcuts";
import { UndoBar } from "./UndoBar";
import "./coaching.css";

/** Ages are re-worded this often. */
const AGE_TICK_MS = 30_000;

const panelPath = (item: QueueItem) => `/executions/${encodeURIComponent(item.execution_id)}/coach`;

/** Re-renders every `ms` so relative times stay true. */
function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/**
 * The operator's work queue: the workspace's pending suggestions across
 * executions, newest first, kept live from the workspace room. `j`/`k` (or
 * the arrows in the list) move the selection, Enter opens the panel.
 */
export default function QueuePage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = pageFromParams(params);
  const filters = filtersFromParams(params);
  const query = apiQuery(filters);
  const now = useNow(AGE_TICK_MS);
  useWorkspaceRoom();
  const { status: connection } = useRealtime();
  const auth = useAuth();
  const workflows = useWorkflowOptions();

  const queue = useQuery({
    queryKey: coachingKeys.queue(page, query),
    queryFn: ({ signal }) => fetchQueue(page, signal, apiQueryParams(filters)),
    // live from the workspace room; read every few seconds instead while that is down
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
    enabled: shows(filters, "suggestion"),
  });
  const questionsQuery = useQuery({
    queryKey: coachingKeys.questions(query),
    queryFn: ({ signal }) => fetchQuestions(signal, apiQueryParams(filters)),
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
    enabled: shows(filters, "question"),
  });
  const setFilters = useCallback(
    (next: QueueFilters) => setParams(paramsOf(next)),
    [setParams],
  );
  // A new suggestion, a question or a decision anywhere in the workspace (the room's `queue_changed`): read the
  // queue again, once per burst of pushes.
  const refresh = useCoalesced(() => {
    void queryClient.invalidateQueries({ queryKey: coachingKeys.queueAll });
    void queryClient.invalidateQueries({ queryKey: ["coaching", "questions"] });
  });
  useSocketEvent(QUEUE_CHANGED, refresh);

  const approvalsQuery = usePendingApprovals();
  const me = { id: auth.user?.id ?? null, email: auth.user?.email ?? null, role: auth.role ?? null };
  const pendingApprovals = Array.isArray(approvalsQuery.data?.items) ? approvalsQuery.data.items : [];
  const decidable: Approval[] = [];
  const blocked: { approval: Approval; reason: string }[] = [];
  for (const approval of shows(filters, "approval") ? pendingApprovals : []) {
    if (!approvalMatches(approval, filters, now)) continue;
    const reason = whyNotDecidable(approval, me);
    if (reason) blocked.push({ approval, reason });
    else decidable.push(approval);
  }

  const items = shows(filters, "suggestion") ? (queue.data?.items ?? []) : [];
  const questions = shows(filters, "question") ? (questionsQuery.data?.items ?? []) : [];
  const waiting =
    (shows(filters, "suggestion") ? (queue.data?.total ?? 0) : 0) +
    (shows(filters, "question") ? (questionsQuery.data?.total ?? 0) : 0) +
    decidable.length;
  useDocumentTitle(waiting > 0 ? `(${waiting}) Queue` : "Queue");
  const {
    entries, current, selectedSuggestion, selectedApproval, selectedQuestion, selectApproval, selectQuestion,
    selectSuggestion, move, listKeys,
  } = useQueueSelection({ approvals: decidable, questions, suggestions: items }, params.get("approval"));

  const [answering, setAnswering] = useState<Question | null>(null);
  const [notice, setNotice] = useState<FlashNotice | null>(null);

  const open = (item: QueueItem | null) => {
    if (item) navigate(panelPath(item));
  };
  const openEntry = (entry: Entry | null) => {
    if (entry?.type === "suggestion") open(entry.item);
    else if (entry?.type === "question") setAnswering(entry.item);
    else if (entry?.item.execution_id) navigate(`/executions/${encodeURIComponent(entry.item.execution_id)}`);
  };

  const { decision, undo, confirmation, dialog, setDialog, dialogApproval, send, act, confirmArmed, takeBack } =
    useQueueApprovalDecisions({
      selectedApproval,
      selectedSuggestion,
      selectedKey: current?.key,
      nothingToDecide: entries.length === 0,
      setNotice,
      selectApproval,
    });

  useShortcuts({
    ...(undo.held ? { z: takeBack } : {}),
    j: () => move(1),
    k: () => move(-1),
    Enter: () => {
      if (!confirmation.isArmed()) return openEntry(current);
      confirmArmed();
    },
    ...(confirmation.armed ? { Escape: confirmation.cancel } : {}),
    i: () => (selectedQuestion ? setAnswering(selectedQuestion) : undefined),
    "/": () => document.getElementById("queue-search")?.focus(),
    a: () => act("a"),
    r: () => act("r"),
    e: () => act("e"),
    "?": () => setDialog("help"),
  });

  const suggestionTotal = queue.data?.total ?? 0;

  const narrow = useMediaQuery("(max-width: 640px)");
  const touch = useTouchScreen();
  return (
    <section aria-labelledby="queue-heading" className="queue">
      <div className="page-head">
        <h1 id="queue-heading">Queue</h1>
        {queue.data || questionsQuery.data ? (
          <p className="muted queue__count" role="status">
            {suggestionTotal === 1 ? "1 suggestion waits" : `${suggestionTotal} suggestions wait`} for a decision
            {questions.length > 0 ? `, ${questionsQuery.data?.total === 1 ? "1 question" : `${questionsQuery.data?.total} questions`} for an answer` : ""}
            {decidable.length > 0 ? `, ${decidable.length === 1 ? "1 approval" : `${decidable.length} approvals`} for you` : ""}
            {isFiltered(filters) ? " (filtered)" : ""}
          </p>
        ) : null}
      </div>
      {touch ? null : (
        <p className="muted queue__hint" id="queue-hint">
          <kbd>j</kbd> / <kbd>k</kbd> move the selection, <kbd>Enter</kbd> opens its coaching panel, <kbd>a</kbd>{" "}
          accepts a suggestion (a risky one: then <kbd>Enter</kbd>)
          {pendingApprovals.length > 0 ? (
            <>
              {" "}(an approval: its execution); on an approval <kbd>a</kbd> then <kbd>Enter</kbd> approves, <kbd>r</kbd> rejects,{" "}
              <kbd>e</kbd> edits a tool call's params
            </>
          ) : null}
          ; on a question <kbd>Enter</kbd> or <kbd>i</kbd> opens the answer. <kbd>/</kbd> searches, <kbd>?</kbd> lists the keys.
        </p>
      )}
      {narrow ? (
        // a phone: the filters fold away so that the first screen shows the work itself
        <details className="queue__filters-fold">
          <summary>Filters{isFiltered(filters) ? " (some set)" : ""}</summary>
          <QueueFilterBar filters={filters} workflows={workflows.data ?? []} onChange={setFilters} />
        </details>
      ) : (
        <QueueFilterBar filters={filters} workflows={workflows.data ?? []} onChange={setFilters} />
      )}

      <div role="alert" className={notice?.tone === "error" ? "notice notice--error" : "visually-hidden"}>
        {notice?.tone === "error" ? notice.text : null}
      </div>
      {confirmation.armed ? (
        <ConfirmPrompt prompt={confirmation.armed.prompt} onCancel={confirmation.cancel} onConfirm={confirmArmed} />
      ) : null}
      {undo.held ? (
        <UndoBar
          decision={undo.held.decision}
          stepName={undo.held.approval.message ?? "the approval"}
          deadline={undo.held.deadline}
          busy={undo.isPending}
          onUndo={takeBack}
        />
      ) : null}
      <p className={notice?.tone === "info" ? "notice notice--info" : "visually-hidden"} role="status">
        {notice?.tone === "info" ? notice.text : null}
      </p>

      {approvalsQuery.isError ? (
        <ErrorNotice title="Could not load the approvals" error={approvalsQuery.error} onRetry={() => void approvalsQuery.refetch()} />
      ) : pendingApprovals.length > 0 && shows(filters, "approval") ? (
        <ApprovalQueue
          items={decidable}
          blocked={blocked}
          selected={selectedApproval}
          now={now}
          busy={decision.isPending}
          armed={confirmation.armed !== null && confirmation.armed.target === selectedApproval?.approval_id}
          onSelect={selectApproval}
          onListKeyDown={listKeys("approval")}
          onAction={act}
        />
      ) : null}

      {questionsQuery.isError ? (
        <ErrorNotice title="Could not load the questions" error={questionsQuery.error} onRetry={() => void questionsQuery.refetch()} />
      ) : questions.length > 0 ? (
        <QuestionList
          items={questions}
          selected={selectedQuestion}
          now={now}
          onSelect={selectQuestion}
          onOpen={(item) => setAnswering(item)}
          onListKeyDown={listKeys("question")}
        />
      ) : null}

      {shows(filters, "suggestion") ? (
        <SuggestionList
          queue={queue}
          items={items}
          filtered={isFiltered(filters)}
          selected={selectedSuggestion}
          now={now}
          onListKeyDown={listKeys("suggestion")}
          onOpen={(item) => {
            selectSuggestion(item);
            open(item);
          }}
          onPage={(next) => setParams(next > 1 ? { ...paramsOf(filters), page: String(next) } : paramsOf(filters))}
        />
      ) : null}

      {dialog === "help" ? <ShortcutSheet onClose={() => setDialog(null)} /> : null}
      {answering ? (
        <AnswerDialog
          item={answering}
          onClose={() => setAnswering(null)}
          onAnswered={(text) => {
            setAnswering(null);
            setNotice({ tone: "info", text });
          }}
        />
      ) : null}
      {dialog === "reject" && dialogApproval ? (
        <RejectApprovalDialog
          approval={dialogApproval}
          sending={decision.isPending}
          onSubmit={(comment) => send(dialogApproval, "reject", { comment })}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === "edit" && dialogApproval ? (
        <EditParamsDialog
          approval={dialogApproval}
          sending={decision.isPending}
          serverError={decision.error}
          onSubmit={(params, comment) => send(dialogApproval, "edit", { params, comment })}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </section>
  );
}
