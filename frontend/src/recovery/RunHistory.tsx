import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router-dom";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge } from "../components/StatusBadge";
import { formatDateTime, formatValue } from "../format";
import { fetchHistory, historyKey, type HistoryChange, type HistoryEvent, type HistoryStep } from "./api";
import "./recovery.css";

/** How often the history of a run that goes on is re-read (besides whenever the execution is seen to change). */
export const HISTORY_POLL_MS = 5000;

/** What changes when something worth re-reading the history happened: the status and every step's status and run. */
export function historyVersion(execution: {
  status: string;
  steps: { step_id: string; status: string; run?: number }[];
}): string {
  return [execution.status, ...execution.steps.map((s) => `${s.step_id}:${s.status}:${s.run ?? ""}`)].join("|");
}

// what each kind of event is marked with (text beside it says the rest)
const MARK: Record<string, string> = {
  suggestion: "◇",
  decision: "✔",
  approval: "✔",
  approval_requested: "⧗",
  pause: "‖",
  resume: "▶",
  answer: "✎",
  retry: "↻",
  resume_from: "⇥",
  run: "▸",
  failed: "✕",
  rejected: "✕",
  policy_deny: "✕",
  succeeded: "✓",
  skipped: "↷",
  rerun: "↻",
  start: "▶",
};

function time(at: string | null): string {
  return at ? formatDateTime(at) : "";
}

function Changes({ changes }: { changes: HistoryChange[] }) {
  if (changes.length === 0) return <p className="muted history__changes">No change.</p>;
  return (
    <table className="history__changes">
      <caption className="visually-hidden">Changes</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.path} className={`history__change history__change--${c.change}`}>
            <th scope="row" className="mono">
              {c.path}
            </th>
            <td className="mono">{c.change === "added" ? <span className="muted">—</span> : formatValue(c.before)}</td>
            <td className="mono">{c.change === "removed" ? <span className="muted">removed</span> : formatValue(c.after)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Event({ event }: { event: HistoryEvent }) {
  const tone =
    event.kind === "failed" || event.kind === "rejected" || event.kind === "policy_deny" || event.decision === "reject"
      ? "bad"
      : event.kind === "succeeded" || event.decision === "approve" || event.decision === "accept"
        ? "good"
        : "plain";
  return (
    <li className={`history__event history__event--${event.kind} history__event--${tone}`}>
      <span className="history__mark" aria-hidden="true">
        {MARK[event.kind] ?? "•"}
      </span>
      <div className="history__body">
        <p className="history__text">{event.text}</p>
        <p className="history__meta muted">
          {event.at ? <time dateTime={event.at}>{time(event.at)}</time> : null}
          {event.actor && !event.text.includes(event.actor) ? <> · {event.actor}</> : null}
          {event.kind === "run" && event.idempotency_key ? (
            <>
              {" "}
              · key <span className="mono">{event.idempotency_key}</span>
            </>
          ) : null}
          {event.kind === "rerun" && event.execution_id ? (
            <>
              {" "}
              · <Link to={`/executions/${encodeURIComponent(event.execution_id)}`}>open the re-run</Link>
            </>
          ) : null}
        </p>
        {event.rationale ? <p className="muted history__rationale">Why: {event.rationale}</p> : null}
        {event.changes ? <Changes changes={event.changes} /> : null}
      </div>
    </li>
  );
}

function StepHistory({ step, level }: { step: HistoryStep; level: 2 | 3 }) {
  const Heading = level === 2 ? "h3" : "h4";
  const headingId = `history-${step.step_id}`;
  return (
    <li className="history__step">
      <div className="history__step-head">
        <Heading id={headingId} className="history__step-name">
          {step.name !== step.step_id ? (
            <>
              {step.name} <span className="mono muted">{step.step_id}</span>
            </>
          ) : (
            <span className="mono">{step.step_id}</span>
          )}
        </Heading>
        <StatusBadge status={step.status} />
        {step.run > 1 ? <span className="tag">run {step.run}</span> : null}
        {step.retries > 0 ? (
          <span className="tag">
            retried {step.retries}×
          </span>
        ) : null}
      </div>
      {step.events.length === 0 ? (
        <p className="muted">Nothing has happened at this step yet.</p>
      ) : (
        <ol className="history__events">
          {step.events.map((e, i) => (
            <Event key={`${e.kind}-${i}`} event={e} />
          ))}
        </ol>
      )}
    </li>
  );
}

/**
 * A run's history: per step what was suggested, what a person decided (who, when, the correction's changes), the
 * questions asked and the answers given, approvals with approver and comment, rejections in words, retries.
 */
export function RunHistory({
  executionId,
  live,
  version,
  headingLevel = 2,
  collapsible = false,
}: {
  executionId: string;
  /** Re-read every few seconds while the run goes on. */
  live: boolean;
  /** historyVersion of the execution as the page has it: re-read when it changes. */
  version?: string;
  headingLevel?: 2 | 3;
  /** Shown on demand (the coaching panel, where the suggestion comes first): read only once opened. */
  collapsible?: boolean;
}) {
  const [open, setOpen] = useState(!collapsible);
  const history = useQuery({
    queryKey: historyKey(executionId),
    queryFn: ({ signal }) => fetchHistory(executionId, signal),
    enabled: open,
    refetchInterval: (query) => (query.state.status === "error" || !live ? false : HISTORY_POLL_MS),
  });
  const { refetch } = history;
  const seen = useRef(version);
  useEffect(() => {
    if (version === seen.current) return;
    seen.current = version;
    if (open) void refetch();
  }, [version, refetch, open]);
  const Heading = headingLevel === 2 ? "h2" : "h3";
  return (
    <section className="history" aria-labelledby="history-heading">
      {collapsible ? (
        <Heading id="history-heading" className="history__toggle-heading">
          <button
            type="button"
            className="history__toggle"
            aria-expanded={open}
            aria-controls="history-body"
            onClick={() => setOpen((was) => !was)}
          >
            <span aria-hidden="true">{open ? "▾ " : "▸ "}</span>
            History
          </button>
        </Heading>
      ) : (
        <Heading id="history-heading">History</Heading>
      )}
      {!open ? null : <div id="history-body">{body()}</div>}
    </section>
  );

  function body() {
    return (
      <>
      {history.isPending ? <Loading label="Loading the history…" /> : null}
      {history.isError ? (
        <ErrorNotice title="Could not load the history" error={history.error} onRetry={() => void history.refetch()} />
      ) : null}
      {history.data ? (
        <>
          {history.data.rerun_of ? (
            <p>
              A re-run of{" "}
              <Link to={`/executions/${encodeURIComponent(history.data.rerun_of)}`}>
                execution <span className="mono">{history.data.rerun_of}</span>
              </Link>
              .
            </p>
          ) : null}
          {history.data.events.length > 0 ? (
            <ol className="history__events history__events--run" aria-label="The execution">
              {history.data.events.map((e, i) => (
                <Event key={`${e.kind}-${i}`} event={e} />
              ))}
            </ol>
          ) : null}
          <ol className="history__steps">
            {history.data.steps.map((step) => (
              <StepHistory key={step.step_id} step={step} level={headingLevel} />
            ))}
          </ol>
        </>
      ) : null}
      </>
    );
  }
}
