import { Loading } from "../components/QueryState";
import { AutoReadyFlag, LevelBadge } from "./Badges";
import { DataTable, type Column } from "./DataTable";
import { decisionBreakdown, formatCount, formatLatency, formatRate } from "./format";
import { metricColumns } from "./metricColumns";
import { LazyMetricsCharts as MetricsCharts } from "./LazyMetricsCharts";
import { useWorkflowMetrics } from "./queries";
import { SectionError } from "./SectionError";
import type { MetricsSnapshot } from "./types";

type StepRow = MetricsSnapshot & { step: string };

const stepColumns: Column<StepRow>[] = [
  { header: "Step", rowHeader: true, cell: (s) => <code>{s.step}</code> },
  { header: "Level", cell: (s) => <LevelBadge level={s.level} /> },
  ...metricColumns<StepRow>(["decisions", "accepted", "corrected", "rejected", "acceptance", "confidence", "latency"]),
];

/** A workflow's metrics: totals, the current version, each step, and the charts. */
export function WorkflowMetricsSection({ workflowId, name }: { workflowId: string; name: string }) {
  const metrics = useWorkflowMetrics(workflowId);
  if (metrics.isPending) return <Loading label="Loading metrics…" />;
  if (metrics.isError)
    return (
      <SectionError
        title="Could not load this workflow's metrics"
        what="Metrics"
        error={metrics.error}
        onRetry={() => void metrics.refetch()}
      />
    );
  const m = metrics.data;
  const steps = Object.entries(m.steps ?? {}).map(([step, s]) => ({ ...s, step }));
  return (
    <>
      <dl className="summary" aria-label={`Metrics of ${name}`}>
        <div>
          <dt>Level</dt>
          <dd>
            <LevelBadge level={m.level} />
          </dd>
        </div>
        <div>
          <dt>AUTO-ready</dt>
          <dd>
            <AutoReadyFlag snapshot={m} />
          </dd>
        </div>
        <div>
          <dt>Decisions</dt>
          <dd>
            {formatCount(m.decisions)}
            <span className="cell-note">
              {decisionBreakdown(m)}
            </span>
          </dd>
        </div>
        <div>
          <dt>Acceptance</dt>
          <dd>
            {formatRate(m.acceptance_rate)}
            <span className="cell-note">
              rolling {formatRate(m.rolling_acceptance_rate)} over the last {formatCount(m.window_decisions)}
            </span>
          </dd>
        </div>
        <div>
          <dt>Confidence</dt>
          <dd>{formatRate(m.confidence)}</dd>
        </div>
        <div>
          <dt>Decision latency</dt>
          <dd>{formatLatency(m.decision_latency_ms)}</dd>
        </div>
        {m.current_version ? (
          <div>
            <dt>Version {m.current_version.version} alone</dt>
            <dd>
              {formatCount(m.current_version.decisions)} decisions, {formatRate(m.current_version.acceptance_rate)}{" "}
              accepted
            </dd>
          </div>
        ) : null}
      </dl>
      {steps.length ? (
        <DataTable caption={`Metrics per step of ${name}`} showCaption columns={stepColumns} rows={steps} rowKey={(s) => s.step} />
      ) : null}
      <MetricsCharts series={m.series ?? []} scope={`“${name}”`} autoBar={m.to_auto?.auto_acceptance} />
    </>
  );
}
