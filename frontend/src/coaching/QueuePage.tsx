import { EDITABLE_KINDS } from "../approvals/types";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState, type KeyboardEvent } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import { ApiError } from "../api/client";
import { ApprovalQueue, approvalOptionId } from "../approvals/ApprovalQueue";
import { EditParamsDialog } from "../approvals/EditParamsDialog";
import { whyNotDecidable } from "../approvals/eligibility";
import type { Approval, ApprovalDecisionKind } from "../approvals/types";
import { refusalText, useApprovalDecision, usePendingApprovals } from "../approvals/useApprovals";
import { useAuth } from "../auth/useAuth";
import { Pager, pageFromParams } from "../components/Pager";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { useRealtime, useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import { useWorkflowOptions } from "../api/workflowOptions";
import { coachingKeys, fetchQuestions, fetchQueue } from "./api";
import { approvalPrompt, useConfirmation } from "./confirmation";
import { ConfirmPrompt } from "./ConfirmPrompt";
import { QueueFilterBar } from "./QueueFilterBar";
import { AnswerDialog, QuestionList, questionOptionId } from "./QuestionList";
import { apiQuery, approvalMatches, filtersFromParams, isFiltered, keyVariables, paramsOf, shows, type QueueFilters } from "./queueFilters";
import { confidenceLabel, formatAge } from "../format";
import { ShortcutSheet } from "./ShortcutSheet";
import { RejectApprovalDialog } from "../approvals/RejectApprovalDialog";
import type { Question, QueueItem } from "./types";
import { OFFLINE_POLL_MS } from "./useCoachingSession";
import { useShortcuts } from "./useShortcuts";
import { useApprovalUndo } from "../approvals/useApprovalUndo";
import { UndoBar } from "./UndoBar";
import { useUndoChord } from "./useUndo";
import "./coaching.css";

/** Ages are re-worded this often. */
const AGE_TICK_MS = 30_000;

const optionId = (item: QueueItem) => `queue-item-${item.suggestion_id}`;

/** One selectable row of the queue: an approval the viewer can decide, or a suggestion. */
type Entry =
  | { type: "approval"; item: Approval; key: string }
  | { type: "question"; item: Question; key: string }
  | { type: "suggestion"; item: QueueItem; key: string };
type Notice = { tone: "error" | "info"; text: string };
const DONE: Record<ApprovalDecisionKind, string> = { approve: "Approved", reject: "Rejected", edit: "Edited and approved" };
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
    queryFn: ({ signal }) => fetchQueue(page, signal, query),
    // live from the workspace room; read every few seconds instead while that is down
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
    enabled: shows(filters, "suggestion"),
  });
  const questionsQuery = useQuery({
    queryKey: coachingKeys.questions(query),
    queryFn: ({ signal }) => fetchQuestions(signal, query),
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
    enabled: shows(filters, "question"),
  });
  const setFilters = useCallback(
    (next: QueueFilters) => setParams(paramsOf(next)),
    [setParams],
  );
  // A new suggestion, or a decision anywhere in the workspace: read the queue again.
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: coachingKeys.queueAll });
    void queryClient.invalidateQueries({ queryKey: ["coaching", "questions"] });
  };
  useSocketEvent("coaching_suggestion", refresh);
  useSocketEvent("execution_update", refresh);
  useSocketEvent("clarification_requested", refresh);

  const approvalsQuery = usePendingApprovals();
  const decision = useApprovalDecision();
  const undo = useApprovalUndo();
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
  // Approvals first (an execution waits on each), then questions, then suggestions; one selection moves through all.
  const entries: Entry[] = [
    ...decidable.map((item): Entry => ({ type: "approval", item, key: `approval:${item.approval_id}` })),
    ...questions.map((item): Entry => ({ type: "question", item, key: `question:${item.execution_id}` })),
    ...items.map((item): Entry => ({ type: "suggestion", item, key: `suggestion:${item.suggestion_id}` })),
  ];
  const waiting =
    (shows(filters, "suggestion") ? (queue.data?.total ?? 0) : 0) +
    (shows(filters, "question") ? (questionsQuery.data?.total ?? 0) : 0) +
    decidable.length;
  useDocumentTitle(waiting > 0 ? `(${waiting}) Queue` : "Queue");
  // The selection follows its row when the lists change, and falls back to the first.
  // `?approval=<id>` (from a waiting execution) selects that approval.
  const [selectedKey, setSelectedKey] = useState<string | null>(() => {
    const linked = params.get("approval");
    return linked ? `approval:${linked}` : null;
  });
  const index = Math.max(0, entries.findIndex((entry) => entry.key === selectedKey));
  const current = entries[index] ?? null;
  const selected = current?.type === "suggestion" ? current.item : null;
  const selectedApproval = current?.type === "approval" ? current.item : null;
  const selectedQuestion = current?.type === "question" ? current.item : null;

  const [dialog, setDialog] = useState<"reject" | "edit" | "help" | null>(null);
  const [answering, setAnswering] = useState<Question | null>(null);
  const [dialogApproval, setDialogApproval] = useState<Approval | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);

  const elementId = (entry: Entry) =>
    entry.type === "approval"
      ? approvalOptionId(entry.item)
      : entry.type === "question"
        ? questionOptionId(entry.item)
        : optionId(entry.item);
  const move = (by: number, within?: Entry["type"]) => {
    const pool = within ? entries.filter((e) => e.type === within) : entries;
    if (pool.length === 0) return;
    const at = Math.max(0, pool.findIndex((e) => e.key === current?.key));
    const from = current && pool.some((e) => e.key === current.key) ? at : by > 0 ? -1 : pool.length;
    const target = pool[Math.min(pool.length - 1, Math.max(0, from + by))];
    setSelectedKey(target.key);
    document.getElementById(elementId(target))?.scrollIntoView?.({ block: "nearest" });
  };
  const open = (item: QueueItem | null) => {
    if (item) navigate(panelPath(item));
  };
  const openEntry = (entry: Entry | null) => {
    if (entry?.type === "suggestion") open(entry.item);
    else if (entry?.type === "question") setAnswering(entry.item);
    else if (entry?.item.execution_id) navigate(`/executions/${encodeURIComponent(entry.item.execution_id)}`);
  };

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
          setNotice({ tone: "info", text: `${DONE[kind]}: ${approval.message}.${still}` });
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

  // approving takes a confirming key (confirmation.ts: every approval is a checkpoint); moving the selection drops it
  const confirmation = useConfirmation<"approve">();
  useEffect(() => confirmation.cancel(), [current?.key, confirmation.cancel]);
  // the armed button takes focus, so that Enter confirms even when another button had it
  const armedPrompt = confirmation.armed?.prompt;
  useEffect(() => {
    if (armedPrompt) document.querySelector<HTMLButtonElement>(".decision-bar__button--armed")?.focus();
  }, [armedPrompt]);

  /** a / r / e: act on the selected approval; on a suggestion they say where its decisions are. */
  const act = (key: "a" | "r" | "e", viaButton = false) => {
    if (decision.isPending) return;
    // a click on the armed Approve button confirms it (a key press of a again does not)
    const confirmed = viaButton && key === "a" ? confirmation.take(selectedApproval?.approval_id) : null;
    confirmation.cancel();
    if (!selectedApproval) {
      setNotice({
        tone: "info",
        text: entries.length === 0 ? "There is nothing to decide." :
          "a, r and e decide approvals. Press Enter to open the selected suggestion's coaching panel and decide it there.",
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

  const takeBack = () =>
    undo.takeBack({
      onSuccess: () => {
        setNotice({ tone: "info", text: "Taken back: the approval waits for a decision again." });
        if (undo.held) setSelectedKey(`approval:${undo.held.approval.approval_id}`);
      },
      onError: (error) => setNotice({ tone: "error", text: `It could not be taken back: ${refusalText(error)}` }),
    });
  useUndoChord(takeBack, undo.held !== null);

  useShortcuts({
    ...(undo.held ? { z: takeBack } : {}),
    j: () => move(1),
    k: () => move(-1),
    Enter: () => {
      if (!confirmation.isArmed()) return openEntry(current);
      const armed = confirmation.take(selectedApproval?.approval_id);
      if (armed && selectedApproval) send(selectedApproval, "approve");
    },
    ...(confirmation.armed ? { Escape: confirmation.cancel } : {}),
    i: () => (selectedQuestion ? setAnswering(selectedQuestion) : undefined),
    "/": () => document.getElementById("queue-search")?.focus(),
    a: () => act("a"),
    r: () => act("r"),
    e: () => act("e"),
    "?": () => setDialog("help"),
  });

  const listKeys = (within: Entry["type"]) => (event: KeyboardEvent<HTMLUListElement>) => {
    const by = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (by) {
      event.preventDefault();
      move(by, within);
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      move(event.key === "Home" ? -entries.length : entries.length, within);
    }
  };
  const onListKeyDown = listKeys("suggestion");
  const suggestionTotal = queue.data?.total ?? 0;

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
      <p className="muted queue__hint" id="queue-hint">
        <kbd>j</kbd> / <kbd>k</kbd> move the selection, <kbd>Enter</kbd> opens its coaching panel
        {pendingApprovals.length > 0 ? (
          <>
            {" "}(an approval: its execution); on an approval <kbd>a</kbd> then <kbd>Enter</kbd> approves, <kbd>r</kbd> rejects,{" "}
            <kbd>e</kbd> edits a tool call's params
          </>
        ) : null}
        ; on a question <kbd>Enter</kbd> or <kbd>i</kbd> opens the answer. <kbd>/</kbd> searches, <kbd>?</kbd> lists the keys.
      </p>

      <QueueFilterBar filters={filters} workflows={workflows.data ?? []} onChange={setFilters} />

      <div role="alert" className={notice?.tone === "error" ? "notice notice--error" : "visually-hidden"}>
        {notice?.tone === "error" ? notice.text : null}
      </div>
      {confirmation.armed ? (
        <ConfirmPrompt prompt={confirmation.armed.prompt} onCancel={confirmation.cancel} />
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
          onSelect={(approval) => setSelectedKey(`approval:${approval.approval_id}`)}
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
          onSelect={(item) => setSelectedKey(`question:${item.execution_id}`)}
          onOpen={(item) => setAnswering(item)}
          onListKeyDown={listKeys("question")}
        />
      ) : null}

      {shows(filters, "suggestion") ? <h2 id="suggestions-heading">Suggestions</h2> : null}
      {!shows(filters, "suggestion") ? null : queue.isPending ? (
        <Loading label="Loading the queue…" />
      ) : queue.isError ? (
        <ErrorNotice title="Could not load the queue" error={queue.error} onRetry={() => void queue.refetch()} />
      ) : items.length === 0 ? (
        <p className="empty">
          {isFiltered(filters)
            ? "No suggestion matches these filters."
            : "Nothing to decide: no suggestion is waiting. New ones appear here as they come."}
        </p>
      ) : (
        <>
          <ul
            className="queue__list"
            role="listbox"
            aria-label="Pending suggestions"
            aria-describedby="queue-hint"
            aria-activedescendant={selected ? optionId(selected) : undefined}
            tabIndex={0}
            onKeyDown={onListKeyDown}
          >
            {items.map((item) => {
              const isSelected = item.suggestion_id === selected?.suggestion_id;
              const paused = item.execution_status === "paused";
              return (
                <li
                  key={item.suggestion_id}
                  id={optionId(item)}
                  role="option"
                  aria-selected={isSelected}
                  className={`queue__item${isSelected ? " queue__item--selected" : ""}`}
                  onClick={() => {
                    setSelectedKey(`suggestion:${item.suggestion_id}`);
                    open(item);
                  }}
                >
                  <span className="queue__marker" aria-hidden="true">
                    {isSelected ? "▶" : ""}
                  </span>
                  <span className="queue__main">
                    <span className="queue__workflow">{item.workflow_name}</span>
                    <span className="queue__step">
                      {item.step_name || item.step_id}
                      {item.tool ? (
                        <>
                          {" · "}
                          <span className="mono">{item.tool}</span>
                        </>
                      ) : null}
                    </span>
                    {keyVariables(item.variables) ? (
                      <span className="queue__vars mono">{keyVariables(item.variables)}</span>
                    ) : null}
                  </span>
                  <span className="queue__meta">
                    <span>Confidence {confidenceLabel(item.confidence)}</span>
                    <time dateTime={item.created_at}>{formatAge(item.created_at, now)}</time>
                    {paused ? <span className="tag tag--paused">‖ Paused</span> : null}
                    {item.purpose === "correction" ? <span className="tag">✕ Rejected: needs a correction</span> : null}
                    {item.purpose === "spot_check" ? <span className="tag">Spot check</span> : null}
                    {item.kind === "tool_call" ? <span className="tag">Agent tool call</span> : null}
                  </span>
                </li>
              );
            })}
          </ul>
          <Pager
            label="Queue pages"
            page={queue.data.page}
            perPage={queue.data.per_page}
            total={queue.data.total}
            onChange={(next) => setParams(next > 1 ? { ...paramsOf(filters), page: String(next) } : paramsOf(filters))}
          />
        </>
      )}

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
