/**
 * What the latest decisions did to a workflow's promotion evidence (issue 40, item 19): each decision's e-value
 * before and after it against the threshold, and the accepts in a row it left needed; and, where the workflow is
 * AUTO-ready while some of its steps are not, why (the workflow's test pools every step's decisions).
 */
import { Link } from "react-router-dom";
import { errorMessage } from "../api/client";
import type { MetricsSnapshot, WorkflowMetrics } from "../api/metrics";
import { formatCount, formatDateTime, plural } from "../format";
import { DataTable, type Column } from "./DataTable";
import { useWorkflowDecisions, type StepDecision } from "./queries";

export const eValue = (n: number | undefined | null) =>
  n === undefined || n === null ? "—" : n >= 1000 ? n.toExponential(2) : n.toFixed(n >= 10 ? 1 : 2);

const WORDS: Record<string, string> = {
  accept: "Accepted",
  correct: "Corrected",
  reject: "Rejected",
  manual: "Done by hand",
  skip: "Skipped",
};

/** "24.1 → 9.3" with a word of what it meant; "not in the evidence" where the evidence restarted since. */
export function DecisionEffect({ d, threshold }: { d: StepDecision; threshold: number }) {
  const e = d.evidence;
  if (!e) return <span className="muted">{d.counted ? "not in the current evidence" : "not counted"}</span>;
  const before = e.e_value_before ?? 1;
  const after = e.e_value_after ?? 1;
  const direction = after > before ? "up" : after < before ? "down" : "same";
  const needed = e.accepts_needed_after;
  return (
    <span data-effect={direction}>
      e-value {eValue(before)} → <strong>{eValue(after)}</strong>
      <span className="muted">
        {" "}
        {after >= threshold
          ? `(the ${eValue(threshold)} needed is met)`
          : needed === null || needed === undefined
            ? "(no run of accepts would do then)"
            : `(then ${plural(needed, "more accept")} in a row)`}
      </span>
    </span>
  );
}

/** "N of M decisions in the evidence came from attentive reviewers", or "" when nothing needs saying: shown where the
 * workspace takes its evidence from attentive reviewers only, or once some of it came from them. */
export function attentiveLine(m: MetricsSnapshot | undefined, evidenceFrom?: "all" | "attentive"): string {
  const total = m?.evidence_decisions;
  const attentive = m?.attentive_decisions ?? 0;
  if (total === undefined || (evidenceFrom !== "attentive" && !attentive)) return "";
  return `${formatCount(attentive)} of ${plural(total, "decision")} in the evidence came from attentive reviewers`;
}

/**
 * How much of the readiness evidence came from attentive reviewers (docs/autonomy.md "Check suggestions"): a
 * paragraph, or a `dt`/`dd` pair in a summary list (`as="dl-item"`).
 */
export function AttentiveShare({
  m,
  evidenceFrom,
  as = "p",
}: {
  m?: MetricsSnapshot;
  evidenceFrom?: "all" | "attentive";
  as?: "p" | "dl-item";
}) {
  const line = attentiveLine(m, evidenceFrom);
  if (!line) return null;
  const note =
    evidenceFrom === "attentive" ? (
      <span className="muted"> (only theirs count in the readiness test; the others' still count in acceptance)</span>
    ) : null;
  if (as === "p")
    return (
      <p data-attentive-decisions={m?.attentive_decisions ?? 0}>
        {line}
        {note}.
      </p>
    );
  return (
    <div>
      <dt>From attentive reviewers</dt>
      <dd data-attentive-decisions={m?.attentive_decisions ?? 0}>
        {line}
        {note}
      </dd>
    </div>
  );
}

const columns = (threshold: number): Column<StepDecision>[] => [
  { header: "When", rowHeader: true, cell: (d) => formatDateTime(d.created_at) },
  { header: "Step", cell: (d) => <code>{d.step_id}</code> },
  { header: "Decision", cell: (d) => <span data-decision={d.decision}>{WORDS[d.decision] ?? d.decision}</span> },
  { header: "By", cell: (d) => d.operator },
  { header: "Effect on the workflow's evidence", cell: (d) => <DecisionEffect d={d} threshold={threshold} /> },
  {
    header: "Execution",
    cell: (d) => <Link to={`/executions/${encodeURIComponent(d.execution_id)}`}>open</Link>,
  },
];

/** Why the workflow can be AUTO-ready while steps are not, or the reverse; "" when nothing needs saying. */
export function poolingNote(m: WorkflowMetrics): string {
  const steps = Object.entries(m.steps ?? {}).filter(([id]) => !id.includes(":"));
  const notReady = steps.filter(([, s]) => !s.auto_ready && s.mode !== "always_review");
  const counted = m.evidence?.counted_since_restart ?? 0;
  const pooled = `The workflow's test pools the decisions of all its steps (${formatCount(counted)} counted since its evidence last restarted); each step's test counts only that step's own decisions.`;
  if (m.auto_ready && notReady.length)
    return `${pooled} So the workflow can be AUTO-ready while ${notReady.length} of its ${steps.length} steps are not: ${notReady.map(([id]) => id).join(", ")} ${notReady.length === 1 ? "has" : "have"} too few decisions or too many changed for their own test. Promoting the workflow runs those steps unattended too; promote steps one by one instead to keep them coached.`;
  if (!m.auto_ready && steps.some(([, s]) => s.auto_ready))
    return `${pooled} A step can be AUTO-ready on its own while the workflow is not: promote that step alone.`;
  return "";
}

export function EvidenceTrail({ metrics }: { metrics: WorkflowMetrics }) {
  const decisions = useWorkflowDecisions(metrics.workflow_id, 10);
  const threshold = metrics.evidence?.threshold ?? 20;
  const note = poolingNote(metrics);
  return (
    <section aria-labelledby="evidence-trail-heading" className="evidence-trail">
      <h3 id="evidence-trail-heading">What the last decisions did</h3>
      <p>
        The workflow's e-value is <strong data-e-value>{eValue(metrics.evidence?.e_value)}</strong>; AUTO-ready needs{" "}
        <strong>{eValue(threshold)}</strong> (1 / the error level). An accept raises it a little, a correction,
        rejection or manual decision lowers it a lot: one correction after a long run of accepts can cost many accepts.
      </p>
      <AttentiveShare m={metrics} evidenceFrom={metrics.evidence_from} />
      {note ? <p className="evidence-trail__note">{note}</p> : null}
      {decisions.isPending ? (
        <p className="muted">Loading the decisions…</p>
      ) : decisions.isError ? (
        <p className="field__error">Could not load the decisions: {errorMessage(decisions.error)}</p>
      ) : decisions.data.items.length ? (
        <DataTable
          caption={`Latest decisions of ${metrics.name ?? "this workflow"}, newest first`}
          columns={columns(threshold)}
          rows={decisions.data.items}
          rowKey={(d) => d.decision_id}
        />
      ) : (
        <p className="muted">No decision yet.</p>
      )}
    </section>
  );
}
