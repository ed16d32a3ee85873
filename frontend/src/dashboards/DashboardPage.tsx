import { useState } from "react";
import { Link } from "react-router-dom";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { levelLabel, modeLabel } from "./Badges";
import "./dashboards.css";
import { GlobalSummary } from "./GlobalSummary";
import { MetricsTrends } from "./MetricsTrends";
import { useModeChanger } from "./ModeChange";
import { OperatorsTable } from "./OperatorsTable";
import { useLiveMetrics, useWorkflowMetricsList } from "./queries";
import type { LevelChangedEvent, WorkflowMetrics } from "../api/metrics";
import { WorkflowLevelsTable } from "./WorkflowLevelsTable";
import { StepModesTable, useStepModeChanger, type StepRow } from "./StepModes";
import { DashboardNotices } from "../notifications/DashboardNotices";
import { isDemotion } from "../notifications/describe";

/** The steps a lead can act on alone: with a mode of their own, or AUTO-ready while their workflow is coached. */
function actionableSteps(workflows: WorkflowMetrics[]): StepRow[] {
  return workflows.flatMap((w) =>
    Object.entries(w.steps ?? {})
      .filter(([, s]) => s.mode !== "coaching" || (s.auto_ready && w.mode !== "auto"))
      .map(([stepId, s]) => ({ workflowId: w.workflow_id, workflowName: w.name, stepId, mode: s.mode, metrics: s })),
  );
}

/**
 * A level change as a sentence for the live region ("" for a step's level change: the workflow's own change,
 * pushed by the same decision just before it, is the news; a step's mode change is announced).
 */
function describeChange(event: LevelChangedEvent, workflows: WorkflowMetrics[] | undefined): string {
  const wfName = workflows?.find((w) => w.workflow_id === event.workflow_id)?.name ?? `Workflow ${event.workflow_id}`;
  const name = event.step_id ? `Step ${event.step_id} of ${wfName}` : wfName;
  if (event.previous_mode && event.mode && event.previous_mode !== event.mode)
    return `“${name}” went from ${modeLabel(event.previous_mode)} to ${modeLabel(event.mode)} mode${event.reason ? `: ${event.reason}` : ""}.`;
  if (event.step_id) return "";
  const from = event.previous_level ? ` from ${levelLabel(event.previous_level)}` : "";
  // the level AUTO is "AUTO-ready"; the mode is apart: a workflow still in coaching is said to be so
  const ready = event.level !== "AUTO" && event.auto_ready ? ", and is AUTO-ready" : "";
  const mode = event.mode ? `; its mode is ${modeLabel(event.mode)}` : "";
  return `“${name}” moved${from} to ${levelLabel(event.level)}${ready}${mode}.`;
}

/** The lead dashboard: workspace totals, workflows by level with promotion, charts, operators. Live. */
export default function DashboardPage() {
  useDocumentTitle("Dashboard");
  const workflows = useWorkflowMetricsList();
  const [announcement, setAnnouncement] = useState("");
  useLiveMetrics((event) => {
    const sentence = describeChange(event, workflows.data?.items);
    if (sentence && !isDemotion(event)) setAnnouncement(sentence); // a demotion is a notice, announced there
  });
  const modes = useModeChanger();
  const stepModes = useStepModeChanger();
  const steps = actionableSteps(workflows.data?.items ?? []);

  return (
    <section aria-labelledby="dashboard-heading" className="dashboard">
      <h1 id="dashboard-heading">Dashboard</h1>
      <p className="lead">
        How far each workflow's suggestions can be trusted. A workflow is AUTO-ready when the evidence is strong
        that its acceptance is at least its threshold (a sequential test that stays valid although it is checked
        after every decision, and that follows the present); then a lead may promote it. Figures update live.
      </p>
      <p className="live-hint" role="status">
        {announcement}
      </p>
      <DashboardNotices workflows={workflows.data?.items} />
      {modes.ui}

      <h2 id="totals-heading">Workspace</h2>
      <GlobalSummary />

      <h2 id="workflows-heading">Workflows</h2>
      {workflows.isPending ? (
        <Loading label="Loading workflows' metrics…" />
      ) : workflows.isError ? (
        <ErrorNotice
          title="Could not load the workflows' metrics"
          error={workflows.error}
          onRetry={() => void workflows.refetch()}
        />
      ) : workflows.data.items.length === 0 ? (
        <p className="empty">
          No workflows yet. <Link to="/workflows">Workflows</Link> lists them once created.
        </p>
      ) : (
        <WorkflowLevelsTable workflows={workflows.data.items} onAsk={modes.ask} />
      )}

      <h2 id="steps-heading">Steps</h2>
      {stepModes.ui}
      {steps.length ? (
        <StepModesTable
          caption="Steps with a mode of their own, or AUTO-ready while their workflow is coached"
          rows={steps}
          onChange={stepModes.change}
          withWorkflow
        />
      ) : (
        <p className="empty">
          No step is AUTO-ready on its own, promoted or pinned yet. A workflow's page lists all of its steps.
        </p>
      )}

      <h2 id="trends-heading">Acceptance and latency over time</h2>
      <MetricsTrends workflows={workflows.data?.items ?? []} />

      <h2 id="operators-heading">Operators</h2>
      <OperatorsTable />
    </section>
  );
}
