import { Link } from "react-router-dom";
import { AutoReadyFlag, LevelBadge, modeLabel } from "./Badges";
import { DataTable, type Column } from "./DataTable";
import { metricColumns } from "./metricColumns";
import { ModeButton, type ModeTarget } from "./ModeChange";
import type { WorkflowMetrics } from "../api/metrics";

export function modeTarget(w: WorkflowMetrics): ModeTarget {
  return { workflowId: w.workflow_id, name: w.name, mode: w.mode, level: w.level, auto_ready: w.auto_ready, to_auto: w.to_auto, evidence: w.evidence, steps: w.steps };
}

/** Every workflow with its level, AUTO-readiness, mode, rates, and the promote / demote button. */
export function WorkflowLevelsTable({ workflows, onAsk }: { workflows: WorkflowMetrics[]; onAsk: (t: ModeTarget) => void }) {
  const columns: Column<WorkflowMetrics>[] = [
    {
      header: "Workflow",
      rowHeader: true,
      cell: (w) => <Link to={`/workflows/${encodeURIComponent(w.workflow_id)}`}>{w.name}</Link>,
    },
    { header: "Level", cell: (w) => <LevelBadge level={w.level} /> },
    { header: "AUTO-ready", cell: (w) => <AutoReadyFlag snapshot={w} /> },
    ...metricColumns<WorkflowMetrics>(["decisions", "acceptance", "rolling", "confidence", "latency"]),
    {
      // What a lead chose, next to the button that changes it.
      header: "Mode",
      cell: (w) => (
        <span className="mode-cell">
          <span data-mode={w.mode}>{modeLabel(w.mode)}</span>
          <ModeButton target={modeTarget(w)} onAsk={onAsk} />
        </span>
      ),
    },
  ];
  return (
    <DataTable
      caption={`Workflows by learning level, ${workflows.length} in total`}
      columns={columns}
      rows={workflows}
      rowKey={(w) => w.workflow_id}
      rowClassName={(w) => (w.auto_ready && w.mode !== "auto" ? "row--ready" : undefined)}
    />
  );
}
