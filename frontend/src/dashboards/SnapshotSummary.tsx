import type { ReactNode } from "react";
import type { MetricsTotals } from "../api/metrics";
import { decisionBreakdown, formatCount, formatLatency, formatRate } from "../format";

/** One term of a `SnapshotSummary`. */
export function SummaryItem({ term, children }: { term: ReactNode; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/**
 * A scope's metrics as a summary list (the workspace totals, a workflow's
 * metrics): `before`, then decisions, acceptance, confidence and latency,
 * then `after`. `rollingWindow` names how many decisions the rolling
 * acceptance counts.
 */
export function SnapshotSummary({
  label,
  snapshot: s,
  rollingWindow = false,
  before,
  after,
}: {
  label: string;
  snapshot: MetricsTotals;
  rollingWindow?: boolean;
  before?: ReactNode;
  after?: ReactNode;
}) {
  return (
    <dl className="summary" aria-label={label}>
      {before}
      <SummaryItem term="Decisions">
        {formatCount(s.decisions)}
        <span className="cell-note">{decisionBreakdown(s)}</span>
      </SummaryItem>
      <SummaryItem term="Acceptance">
        {formatRate(s.acceptance_rate)}
        <span className="cell-note">
          rolling {formatRate(s.rolling_acceptance_rate)}
          {rollingWindow ? ` over the last ${formatCount(s.window_decisions)}` : null}
        </span>
      </SummaryItem>
      <SummaryItem term="Confidence">{formatRate(s.confidence)}</SummaryItem>
      <SummaryItem term="Decision latency">{formatLatency(s.decision_latency_ms)}</SummaryItem>
      {after}
    </dl>
  );
}
