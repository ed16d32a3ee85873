import { Link, useLocation, useParams, useSearchParams } from "react-router-dom";
import { ApiError } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { AutoReadyFlag, LevelBadge, modeLabel } from "./Badges";
import { formatRate } from "../format";
import "./dashboards.css";
import { useIsLead } from "../auth/useAuth";
import { ModeButton, useModeChanger } from "./ModeChange";
import { useLiveMetrics, useWorkflowDefinition, useWorkflowMetrics } from "./queries";
import type { WorkflowDefinition } from "./types";
import { WorkflowDefinitionView } from "./WorkflowDefinitionView";
import { WorkflowExecutions } from "./WorkflowExecutions";
import { WorkflowMetricsSection } from "./WorkflowMetricsSection";
import { ThresholdsEditor } from "./ThresholdsEditor";
import { StepModesTable, useStepModeChanger, type StepRow } from "./StepModes";
import { StepEvidence } from "./StepEvidence";
import { ReviewersSection } from "./ReviewersSection";
import { RegionsSection } from "../regions/RegionsSection";
import { AgentStepRegions } from "../regions/AgentStepRegions";
import { WorkflowActions } from "../workflows/WorkflowActions";
import { StartRunButton } from "../pages/StartRunButton";
import { TriggersSection } from "../triggers/TriggersSection";

/** "AUTO-ready once the evidence shows acceptance ≥ 85% (error level 0.05), after ≥ 20 counted decisions; …" */
function thresholdsText(t: Record<string, number> | undefined): string | null {
  if (!t || t.auto_acceptance == null) return null;
  return (
    `AUTO-ready once the evidence shows acceptance of at least ${formatRate(t.auto_acceptance)} ` +
    `(sequential test at error level ${t.auto_alpha ?? 0.05}), after at least ${t.auto_min_window} counted decisions; ` +
    `rolling figures over the last ${t.window} decisions; coaching after ${t.coaching_after} decisions.`
  );
}

function versionFrom(params: URLSearchParams): number | null {
  const n = Number.parseInt(params.get("version") ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : null;
}

function Versions({ definition }: { definition: WorkflowDefinition }) {
  const versions = Array.from({ length: definition.latest_version }, (_, i) => definition.latest_version - i);
  return (
    <nav aria-label="Versions" className="versions-nav">
      <span className="muted" aria-hidden="true">
        Versions
      </span>
      <ul className="versions">
        {versions.map((v) => (
          <li key={v}>
            <Link
              to={v === definition.latest_version ? `/workflows/${encodeURIComponent(definition.id)}` : `?version=${v}`}
              aria-current={v === definition.version ? "page" : undefined}
            >
              v{v}
              {v === definition.latest_version ? " (latest)" : ""}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** One workflow: its definition (any version), mode and promotion, metrics, packs and executions. */
export default function WorkflowDetailPage() {
  const { id = "" } = useParams();
  const [params] = useSearchParams();
  const version = versionFrom(params);
  const definition = useWorkflowDefinition(id, version);
  const metrics = useWorkflowMetrics(id);
  const modes = useModeChanger();
  const lead = useIsLead();
  const stepModes = useStepModeChanger();
  // "Saved version 3." / "Created …", handed over by the editor
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  useLiveMetrics();
  useDocumentTitle(definition.data?.name ?? "Workflow");

  if (definition.isPending) return <Loading label="Loading the workflow…" />;
  // a failed re-read keeps the page it had (and what a section holds, such as a webhook's secret shown once)
  if (definition.isError && !definition.data)
    return (
      <section aria-labelledby="workflow-heading">
        <h1 id="workflow-heading">Workflow</h1>
        <ErrorNotice
          title={definition.error instanceof ApiError && definition.error.status === 404 ? "No such workflow" : "Could not load the workflow"}
          error={definition.error}
          onRetry={() => void definition.refetch()}
        />
        <Link to="/workflows" className="back">
          ← All workflows
        </Link>
      </section>
    );

  const wf = definition.data;
  const evidence = metrics.data ?? wf;
  const target = {
    workflowId: wf.id,
    name: wf.name,
    mode: metrics.data?.mode ?? wf.mode,
    level: evidence.level,
    auto_ready: evidence.auto_ready ?? false,
    to_auto: metrics.data?.to_auto,
    evidence: metrics.data?.evidence,
    steps: metrics.data?.steps,
    toolSteps: wf.steps.filter((s) => ["action", "agent"].includes(s.type ?? "action")).map((s) => s.id),
  };

  // the tool steps of the version new executions use: the ones that are suggested, so the ones with a mode
  const stepRows: StepRow[] =
    wf.version === wf.latest_version
      ? wf.steps
          .filter((s) => (s.type ?? "action") === "action")
          .map((s) => ({
            workflowId: wf.id,
            workflowName: wf.name,
            stepId: s.id,
            mode: metrics.data?.steps?.[s.id]?.mode ?? wf.step_modes?.[s.id] ?? "coaching",
            metrics: metrics.data?.steps?.[s.id],
          }))
      : [];
  // the agent steps of that version: their calls of each tool have their own regions (`<step>:<tool>`)
  const agentSteps = wf.version === wf.latest_version ? wf.steps.filter((s) => s.type === "agent") : [];
  const calledTools = (stepId: string) =>
    Object.fromEntries(
      Object.entries(metrics.data?.steps ?? {})
        .filter(([key]) => key.startsWith(`${stepId}:`))
        .map(([key, m]) => [key.slice(stepId.length + 1), m.decisions]),
    );

  return (
    <section aria-labelledby="workflow-heading" className="lead-page">
      <Link to="/workflows" className="back">
        ← All workflows
      </Link>
      <div className="page-head">
        <h1 id="workflow-heading">{wf.name}</h1>
        <div className="workflow-actions">
          {wf.version === wf.latest_version ? (
            <StartRunButton workflow={{ ...wf, mode: target.mode }} />
          ) : null}
          <ModeButton target={target} onAsk={modes.ask} />
        </div>
      </div>
      {wf.description ? <p className="lead">{wf.description}</p> : null}
      {notice ? (
        <p className="notice notice--info" role="status">
          {notice}
        </p>
      ) : null}
      {modes.ui}

      <dl className="summary" aria-label="Workflow">
        <div>
          <dt>Version</dt>
          <dd>
            v{wf.version} <span className="muted">of {wf.latest_version}</span>
          </dd>
        </div>
        <div>
          <dt>Mode</dt>
          <dd data-mode={target.mode}>{modeLabel(target.mode)}</dd>
        </div>
        <div>
          <dt>Level</dt>
          <dd>
            <LevelBadge level={target.level} />
          </dd>
        </div>
        <div>
          <dt>AUTO-ready</dt>
          <dd>
            <AutoReadyFlag snapshot={target} />
          </dd>
        </div>
        {thresholdsText(wf.thresholds) ? (
          <div>
            <dt>Thresholds</dt>
            <dd>{thresholdsText(wf.thresholds)}</dd>
          </div>
        ) : null}
      </dl>
      {lead ? <ThresholdsEditor workflowId={wf.id} current={wf.thresholds} /> : null}
      <ul className="links">
        <li>
          <Link to={`/correction-packs?workflow=${encodeURIComponent(wf.id)}`}>Correction packs of {wf.name}</Link>
        </li>
        <li>
          <Link to="/dashboard">Dashboard</Link>
        </li>
      </ul>

      {stepRows.length || (lead && agentSteps.length) ? (
        <>
          <h2>Steps</h2>
          {stepRows.length ? (
            <>
              <p className="muted">
                Each tool step has its own evidence. Promote a step that is AUTO-ready on its own while the rest of the
                workflow is still coached, or pin a step so that a person always decides it.
              </p>
              {stepModes.ui}
              <StepModesTable caption={`Autonomy of each step of ${wf.name}`} rows={stepRows} onChange={stepModes.change} />
              <StepEvidence
                workflowId={wf.id}
                workflowName={wf.name}
                rows={stepRows}
                evidenceFrom={metrics.data?.evidence_from}
              />
            </>
          ) : null}
          {lead
            ? stepRows.map((r) => (
                <RegionsSection key={r.stepId} scope={{ kind: "step", workflowId: wf.id, stepId: r.stepId }} />
              ))
            : null}
          {lead
            ? agentSteps.map((s) => (
                <AgentStepRegions key={s.id} workflowId={wf.id} stepId={s.id} patterns={s.tools}
                  decisions={calledTools(s.id)} />
              ))
            : null}
        </>
      ) : null}

      <h2>Definition</h2>
      {lead ? <WorkflowActions id={wf.id} name={wf.name} latestVersion={wf.latest_version} /> : null}
      <Versions definition={wf} />
      {wf.version !== wf.latest_version ? (
        <p className="muted">You are reading version {wf.version}; new executions use version {wf.latest_version}.</p>
      ) : null}
      <WorkflowDefinitionView definition={wf} />

      <h2>Metrics</h2>
      <WorkflowMetricsSection workflowId={wf.id} name={wf.name} />
      {lead ? <ReviewersSection workflowId={wf.id} workflowName={wf.name} canSetFloor={lead} /> : null}

      <TriggersSection workflowId={wf.id} workflowName={wf.name} variables={wf.variables} lead={lead} />

      <h2>Executions</h2>
      <WorkflowExecutions workflowId={wf.id} name={wf.name} />
    </section>
  );
}
