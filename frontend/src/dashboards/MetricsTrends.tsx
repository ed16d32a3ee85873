import { useId, useState } from "react";
import { LazyMetricsCharts as MetricsCharts } from "./LazyMetricsCharts";
import { useGlobalMetrics, useWorkflowMetrics } from "./queries";
import { QuerySection } from "./SectionError";
import { WorkflowSelect } from "./WorkflowSelect";
import type { WorkflowMetrics } from "../api/metrics";

const ALL = "";

function WorkflowTrend({ workflow }: { workflow: WorkflowMetrics }) {
  return (
    <QuerySection
      query={useWorkflowMetrics(workflow.workflow_id)}
      loading={`Loading the charts of “${workflow.name}”…`}
      title={`Could not load the charts of “${workflow.name}”`}
      what="These charts"
    >
      {(m) => <MetricsCharts series={m.series ?? []} scope={`“${workflow.name}”`} autoBar={m.to_auto?.auto_acceptance} />}
    </QuerySection>
  );
}

function WorkspaceTrend() {
  return (
    <QuerySection
      query={useGlobalMetrics()}
      loading="Loading the charts…"
      title="Could not load the charts"
      what="Workspace-wide charts"
    >
      {(g) => <MetricsCharts series={g.series} scope="all workflows" />}
    </QuerySection>
  );
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
        <WorkflowSelect
          id={selectId}
          value={workflow ? picked : ALL}
          onChange={setPicked}
          workflows={workflows}
          firstLabel="All workflows"
          firstValue={ALL}
        />
      </div>
      {workflow ? <WorkflowTrend workflow={workflow} /> : <WorkspaceTrend />}
    </>
  );
}
