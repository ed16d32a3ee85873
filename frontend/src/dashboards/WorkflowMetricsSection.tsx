import { AutoReadyFlag, LevelBadge } from "./Badges";
import { DataTable, type Column } from "./DataTable";
import { formatCount, formatRate } from "../format";
import { metricColumns } from "./metricColumns";
import { LazyMetricsCharts as MetricsCharts } from "./LazyMetricsCharts";
import { useWorkflowMetrics } from "./queries";
import { QuerySection } from "./SectionError";
import { SnapshotSummary, SummaryItem } from "./SnapshotSummary";
import { EvidenceTrail } from "./EvidenceTrail";
import type { MetricsSnapshot, WorkflowMetrics } from "../api/metrics";

type StepRow = MetricsSnapshot & { step: string };

const stepColumns: Column<StepRow>[] = [
  { header: "Step", rowHeader: true, cell: (s) => <code>{s.step}</code> },
  { header: "Level", cell: (s) => <LevelBadge level={s.level} /> },
  ...metricColumns<StepRow>(["decisions", "accepted", "corrected", "rejected", "acceptance", "confidence", "latency"]),
];

/** A workflow's metrics: totals, the current version, each step, and the charts. */
export function WorkflowMetricsSection({ workflowId, name }: { workflowId: string; name: string }) {
  return (
    <QuerySection
      query={useWorkflowMetrics(workflowId)}
      loading="Loading metrics…"
      title="Could not load this workflow's metrics"
      what="Metrics"
    >
      {(m) => <WorkflowMetricsView metrics={m} name={name} />}
    </QuerySection>
  );
}

function WorkflowMetricsView({ metrics: m, name }: { metrics: WorkflowMetrics; name: string }) {
  const steps = Object.entries(m.steps ?? {}).map(([step, s]) => ({ ...s, step }));
  return (
    <>
      <SnapshotSummary
        label={`Metrics of ${name}`}
        snapshot={m}
        rollingWindow
        before={
          <>
            <SummaryItem term="Level">
              <LevelBadge level={m.level} />
            </SummaryItem>
            <SummaryItem term="AUTO-ready">
              <AutoReadyFlag snapshot={m} />
            </SummaryItem>
          </>
        }
        after={
          m.current_version ? (
            <SummaryItem term={`Version ${m.current_version.version} alone`}>
              {formatCount(m.current_version.decisions)} decisions, {formatRate(m.current_version.acceptance_rate)}{" "}
              accepted
            </SummaryItem>
          ) : null
        }
      />
      <EvidenceTrail metrics={m} />
      {steps.length ? (
        <DataTable caption={`Metrics per step of ${name}`} showCaption columns={stepColumns} rows={steps} rowKey={(s) => s.step} />
      ) : null}
      <MetricsCharts series={m.series ?? []} scope={`“${name}”`} autoBar={m.to_auto?.auto_acceptance} />
    </>
  );
}
