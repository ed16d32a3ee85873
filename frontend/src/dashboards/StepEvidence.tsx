/**
 * The evidence behind each step's readiness (issue 31, item 7): the sequential test's statistic against its
 * threshold, the rolling acceptance against the bar, how many decisions it still needs if all are accepted, and
 * the decisions themselves (read when a lead opens the list), each linked to its execution.
 */
import { useState } from "react";
import { Link } from "react-router-dom";
import { errorMessage } from "../api/client";
import type { StepMetrics } from "../api/metrics";
import { formatCount, formatDateTime, formatRate, plural } from "../format";
import { DataTable, type Column } from "./DataTable";
import { useStepDecisions, type StepDecision } from "./queries";
import type { StepRow } from "./StepModes";
import { AttentiveShare, DecisionEffect } from "./EvidenceTrail";

const number = (n: number | undefined) =>
  n === undefined ? "—" : n >= 1000 ? n.toExponential(2) : n.toFixed(n >= 10 ? 1 : 2);

const DECISION_WORDS: Record<string, string> = {
  accept: "Accepted",
  correct: "Corrected",
  reject: "Rejected",
  manual: "Done by hand",
  skip: "Skipped",
};

function Needed({ m }: { m?: StepMetrics }) {
  if (!m) return <>no decision yet: a window of decisions first</>;
  if (m.auto_ready) return <>none: AUTO-ready</>;
  if (m.decisions_needed === null || m.decisions_needed === undefined)
    return <>no run of accepts would do now (acceptance dropped)</>;
  return <>{plural(m.decisions_needed, "more decision")}, all accepted</>;
}

function Statistic({ m }: { m?: StepMetrics }) {
  const e = m?.evidence;
  if (!m || !e) return <span className="muted">no decision yet</span>;
  const met = (e.e_value ?? 0) >= e.threshold;
  return (
    <span data-statistic-met={met}>
      e-value <strong>{number(e.e_value)}</strong> of the <strong>{number(e.threshold)}</strong> needed{" "}
      <span className="muted">
        ({formatCount(e.accepted_since_restart ?? 0)} accepted of {formatCount(e.counted_since_restart ?? 0)} counted)
      </span>
    </span>
  );
}

function Acceptance({ m }: { m?: StepMetrics }) {
  if (!m) return <span className="muted">—</span>;
  const bar = m.to_auto?.auto_acceptance;
  return (
    <>
      {formatRate(m.rolling_acceptance_rate)} {bar !== undefined ? <>against the {formatRate(bar)} bar</> : null}
    </>
  );
}

const decisionColumns = (threshold: number): Column<StepDecision>[] => [
  { header: "When", rowHeader: true, cell: (d) => formatDateTime(d.created_at) },
  {
    header: "Decision",
    cell: (d) => (
      <span data-decision={d.decision}>
        {DECISION_WORDS[d.decision] ?? d.decision}
        {d.counted ? null : (
          <span className="muted">
            {d.decision === "skip" ? " (not counted)" : " (not counted: not an attentive reviewer then)"}
          </span>
        )}
        {d.outcome === "step_failed" ? <span className="muted"> — its step then failed</span> : null}
      </span>
    ),
  },
  { header: "By", cell: (d) => d.operator },
  { header: "Effect on the step's evidence", cell: (d) => <DecisionEffect d={d} threshold={threshold} /> },
  {
    header: "Execution",
    cell: (d) => (
      <Link to={`/executions/${encodeURIComponent(d.execution_id)}`}>
        <code>{d.execution_id}</code>
      </Link>
    ),
  },
];

function DecisionsBehind({ workflowId, stepId, threshold }: { workflowId: string; stepId: string; threshold: number }) {
  const [open, setOpen] = useState(false);
  const decisions = useStepDecisions(workflowId, stepId, open);
  const listId = `decisions-${stepId}`;
  return (
    <div className="step-evidence__decisions">
      <button
        type="button"
        className="button button--secondary button--small"
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen(!open)}
      >
        {open ? "Hide" : "Show"} the decisions <span className="visually-hidden">behind step {stepId}</span>
      </button>
      {open ? (
        <div id={listId}>
          {decisions.isPending ? (
            <p className="muted">Loading the decisions…</p>
          ) : decisions.isError ? (
            <p className="field__error">Could not load the decisions: {errorMessage(decisions.error)}</p>
          ) : decisions.data.items.length ? (
            <DataTable
              caption={`Latest decisions of step ${stepId}, newest first`}
              columns={decisionColumns(threshold)}
              rows={decisions.data.items}
              rowKey={(d) => d.decision_id}
            />
          ) : (
            <p className="muted">No decision yet.</p>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** One card per tool step: the figures the readiness rule compares, and the decisions behind them. */
export function StepEvidence({
  workflowId,
  workflowName,
  rows,
  evidenceFrom,
}: {
  workflowId: string;
  workflowName: string;
  rows: StepRow[];
  /** the workspace's setting (GET /api/metrics/workflows/<id>): `attentive`, only attentive reviewers count */
  evidenceFrom?: "all" | "attentive";
}) {
  return (
    <section aria-labelledby="step-evidence-heading" className="step-evidence">
      <h3 id="step-evidence-heading">Evidence of each step</h3>
      <p className="muted">
        A step is AUTO-ready when the sequential test's e-value reaches its threshold (1 / error level) and its window
        holds enough counted decisions. Skips are not counted.
      </p>
      {rows.map((r) => (
        <article key={r.stepId} className="step-evidence__card" aria-label={`Evidence of step ${r.stepId} of ${workflowName}`}>
          <h4>
            <code>{r.stepId}</code>{" "}
            <span className={r.metrics?.auto_ready ? "status status--success" : "status status--muted"}>
              {r.metrics?.auto_ready ? "AUTO-ready" : "Not ready"}
            </span>
          </h4>
          <dl className="summary">
            <div>
              <dt>Statistic</dt>
              <dd>
                <Statistic m={r.metrics} />
              </dd>
            </div>
            <div>
              <dt>Rolling acceptance</dt>
              <dd>
                <Acceptance m={r.metrics} />
              </dd>
            </div>
            <div>
              <dt>Decisions needed</dt>
              <dd data-decisions-needed={r.metrics?.decisions_needed ?? ""}>
                <Needed m={r.metrics} />
              </dd>
            </div>
            <AttentiveShare m={r.metrics} evidenceFrom={evidenceFrom} as="dl-item" />
          </dl>
          <DecisionsBehind workflowId={workflowId} stepId={r.stepId} threshold={r.metrics?.evidence?.threshold ?? 20} />
        </article>
      ))}
    </section>
  );
}
