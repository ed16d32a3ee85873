import { useId, useState } from "react";
import { Loading } from "../components/QueryState";
import { LazyMetricsCharts as MetricsCharts } from "./LazyMetricsCharts";
import { useGlobalMetrics, useWorkflowMetrics } from "./queries";
import { SectionError } from "./SectionError";
import type { WorkflowMetrics } from "./types";

const ALL = "";

function WorkflowTrend({ workflow }: { workflow: WorkflowMetrics }) {
  const metrics = useWorkflowMetrics(workflow.workflow_id);
  if (metrics.isPending) return <Loading label={`Loading the charts of “${workflow.name}”…`} />;
  if (metrics.isError)
    return (
      <SectionError
        title={`Could not load the charts of “${workflow.name}”`}
        what="These charts"
        error={metrics.error}
        onRetry={() => void metrics.refetch()}
      />
    );
  return (
    <MetricsCharts
      series={metrics.data.series ?? []}
      scope={`“${workflow.name}”`}
      autoBar={metrics.data.to_auto?.auto_acceptance}
    />
  );
}

function WorkspaceTrend() {
  const global = useGlobalMetrics();
  if (global.isPending) return <Loading label="Loading the charts…" />;
  if (global.isError)
    return (
      <SectionError
        title="Could not load the charts"
        what="Workspace-wide charts"
        error={global.error}
        onRetry={() => void global.refetch()}
      />
    );
  return <MetricsCharts series={global.data.series} scope="all workflows" />;
}

/** The charts, for the whole workspace or one workflow picked in a select. */
export function MetricsTrends({ workflows }: { workflows: WorkflowMetrics[] }) {
  const [picked, setPicked] = useState(ALL);
  const selectId = useId();
  const workflow = workflows.find((w) => w.workflow_id === picked);
  return (
    <>
      <div className="field field--inline">
        <label htmlFor={selectId}>Charts for</label>
        <select id={selectId} value={workflow ? picked : ALL} onChange={(e) => setPicked(e.target.value)}>
          <option value={ALL}>All workflows</option>
          {workflows.map((w) => (
            <option key={w.workflow_id} value={w.workflow_id}>
              {w.name}
            </option>
          ))}
        </select>
      </div>
      {workflow ? <WorkflowTrend workflow={workflow} /> : <WorkspaceTrend />}
    </>
  );
}
