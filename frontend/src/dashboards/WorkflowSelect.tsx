import type { ReactNode } from "react";
import type { WorkflowMetrics } from "../api/metrics";

/** A `<select>` of the workspace's workflows (by name, valued by id), after one first choice ("All workflows"…) and before any `children`. */
export function WorkflowSelect({
  id,
  value,
  onChange,
  workflows,
  firstLabel,
  firstValue = "",
  children,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  workflows: readonly Pick<WorkflowMetrics, "workflow_id" | "name">[];
  firstLabel: string;
  firstValue?: string;
  /** More options, after the workflows. */
  children?: ReactNode;
}) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value={firstValue}>{firstLabel}</option>
      {workflows.map((w) => (
        <option key={w.workflow_id} value={w.workflow_id}>
          {w.name}
        </option>
      ))}
      {children}
    </select>
  );
}
