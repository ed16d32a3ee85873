import { Loading } from "../components/QueryState";
import { levelLabel } from "./Badges";
import { decisionBreakdown, formatCount, formatLatency, formatRate } from "./format";
import { useGlobalMetrics } from "./queries";
import { SectionError } from "./SectionError";

/** The workspace's totals (leads only). */
export function GlobalSummary() {
  const global = useGlobalMetrics();
  if (global.isPending) return <Loading label="Loading workspace totals…" />;
  if (global.isError)
    return (
      <SectionError
        title="Could not load the workspace totals"
        what="Workspace totals"
        error={global.error}
        onRetry={() => void global.refetch()}
      />
    );
  const g = global.data;
  const levels = Object.entries(g.levels ?? {})
    .map(([level, n]) => `${formatCount(n)} ${levelLabel(level)}`)
    .join(", ");
  return (
    <dl className="summary" aria-label="Workspace totals">
      <div>
        <dt>Workflows</dt>
        <dd>
          {formatCount(g.workflows)}
          {levels ? <span className="cell-note">{levels}</span> : null}
        </dd>
      </div>
      <div>
        <dt>AUTO-ready workflows</dt>
        <dd>{formatCount(g.auto_ready_workflows)}</dd>
      </div>
      <div>
        <dt>Decisions</dt>
        <dd>
          {formatCount(g.decisions)}
          <span className="cell-note">
            {decisionBreakdown(g)}
          </span>
        </dd>
      </div>
      <div>
        <dt>Acceptance</dt>
        <dd>
          {formatRate(g.acceptance_rate)}
          <span className="cell-note">rolling {formatRate(g.rolling_acceptance_rate)}</span>
        </dd>
      </div>
      <div>
        <dt>Confidence</dt>
        <dd>{formatRate(g.confidence)}</dd>
      </div>
      <div>
        <dt>Decision latency</dt>
        <dd>{formatLatency(g.decision_latency_ms)}</dd>
      </div>
    </dl>
  );
}
