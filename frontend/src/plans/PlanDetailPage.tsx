import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { Link, useParams } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import { api, unwrap } from "../api/typed";
import { isTerminalStatus } from "../api/types";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { ExecutionControls } from "../control/ExecutionControls";
import { formatDateTime, formatValue, isPlainObject } from "../format";
import { useDocumentTitle } from "../hooks";
import { EXECUTION_POLL_MS, executionQueryKey } from "../pages/ExecutionDetailPage";
import { FailureBanner } from "../recovery/FailureBanner";
import { PLAN_MODES, approvePlan, isPlanMode, executePlan, fetchPlan, fetchPlanStatus, planKeys, savePlanAsWorkflow, type Plan, type PlanMode } from "./api";
import "./plans.css";

const IDLE = new Set(["draft", "approved"]);
const live = (status: string | undefined) => status !== undefined && !IDLE.has(status) && !isTerminalStatus(status);

/** `/plans/:id`: a plan's steps and status; approve, execute, watch it run, save it as a workflow. */
export default function PlanDetailPage() {
  const { id = "" } = useParams<{ id: string }>();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState("");
  const plan = useQuery({ queryKey: planKeys.detail(id), queryFn: ({ signal }) => fetchPlan(id, signal), enabled: id !== "" });
  const running = live(plan.data?.status);
  // while it runs: its status (cheap) every second, and the execution (steps, gate) for the controls
  const status = useQuery({
    queryKey: planKeys.status(id),
    queryFn: ({ signal }) => fetchPlanStatus(id, signal),
    enabled: id !== "" && plan.data !== undefined && !IDLE.has(plan.data.status),
    refetchInterval: (query) => (live(query.state.data?.status ?? plan.data?.status) ? EXECUTION_POLL_MS : false),
  });
  const execution = useQuery({
    queryKey: executionQueryKey(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/executions/{execution_id}", { params: { path: { execution_id: id } }, signal })),
    enabled: id !== "" && plan.data !== undefined,
    refetchInterval: running ? EXECUTION_POLL_MS : false,
  });
  useDocumentTitle(plan.data ? `Plan ${plan.data.name}` : "Plan");
  const currentStatus = status.data?.status ?? plan.data?.status;
  // the plan (its status, corrected steps) follows the live status
  const planStatus = plan.data?.status;
  useEffect(() => {
    if (planStatus && currentStatus && currentStatus !== planStatus) void plan.refetch();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a change of status calls for a new read
  }, [currentStatus, planStatus]);
  useEffect(() => {
    // the steps' last statuses, once it stops or waits
    if (currentStatus && plan.data) void execution.refetch();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a change of status calls for a new read
  }, [currentStatus]);

  const refresh = (next?: Plan) => {
    if (next) queryClient.setQueryData(planKeys.detail(id), next);
    void queryClient.invalidateQueries({ queryKey: planKeys.all });
    void queryClient.invalidateQueries({ queryKey: ["executions"] });
  };
  const approve = useMutation({ mutationFn: () => approvePlan(id), onSuccess: (p) => { refresh(p); setMessage("Plan approved: it can be executed."); } });

  const heading = (
    <h1 id="plan-heading">
      Plan {plan.data ? plan.data.name : <span className="mono">{id}</span>}
    </h1>
  );
  if (plan.isPending || plan.isError) {
    return (
      <section aria-labelledby="plan-heading">
        <BackLink />
        {heading}
        {plan.isPending ? <Loading label="Loading the plan…" /> : (
          <ErrorNotice title="Could not load this plan" error={plan.error} onRetry={() => void plan.refetch()} />
        )}
      </section>
    );
  }
  const data = plan.data;
  const stepStatus = new Map((execution.data?.steps ?? []).map((s) => [s.step_id, s.status]));
  const shownStatus = currentStatus ?? data.status;
  const progress = status.data?.progress ?? data.progress;

  return (
    <section aria-labelledby="plan-heading" className="plan">
      <BackLink />
      <div className="page-head">
        {heading}
        {data.status !== "draft" && data.status !== "approved" ? (
          <Link className="button button--secondary" to={`/executions/${encodeURIComponent(id)}`}>Execution page</Link>
        ) : null}
        {data.mode === "coaching" && live(shownStatus) ? (
          <Link className="button" to={`/executions/${encodeURIComponent(id)}/coach`}>Open coaching panel</Link>
        ) : null}
      </div>
      {data.description ? <p>{data.description}</p> : null}
      <dl className="summary">
        <div><dt>Status</dt><dd><StatusBadge status={shownStatus} />{live(shownStatus) ? <span className="muted live-hint"> (updating live)</span> : null}</dd></div>
        <div><dt>Mode</dt><dd>{data.mode}</dd></div>
        <div><dt>Progress</dt><dd><ProgressMeter progress={progress} label="Plan progress" /></dd></div>
        <div><dt>Created</dt><dd>{formatDateTime(data.created_at)} <span className="muted">by {data.created_by}</span></dd></div>
        {data.approved_by ? <div><dt>Approved</dt><dd>{formatDateTime(data.approved_at)} <span className="muted">by {data.approved_by} ({data.approver_role})</span></dd></div> : null}
        {status.data?.current_step && live(shownStatus) ? <div><dt>Current step</dt><dd className="mono">{status.data.current_step}</dd></div> : null}
        {status.data?.duration_s != null ? <div><dt>Duration</dt><dd>{status.data.duration_s.toFixed(1)} s</dd></div> : null}
      </dl>
      <p className="visually-hidden" aria-live="polite">Plan status: {statusLabel(shownStatus)}</p>
      {message ? <p className="notice notice--info" role="status">{message}</p> : null}
      {shownStatus === "failed" && execution.data?.status === "failed" ? (
        // the failed step and why, with retry and resume from a step (recovery/FailureBanner.tsx)
        <FailureBanner execution={execution.data} onMessage={setMessage} rerun={false} />
      ) : status.data?.error ? <div className="notice notice--error" role="alert"><p className="notice__title">The plan failed.</p><pre className="code">{formatValue(status.data.error)}</pre></div> : null}

      {data.status === "draft" ? (
        <div className="card plan__action">
          <h2>Approve</h2>
          <p className="muted">A lead approves any plan; an operator one whose every call the policy allows as it stands.</p>
          {approve.isError ? <ApproveRefusal error={approve.error} /> : null}
          <button type="button" className="button" disabled={approve.isPending} onClick={() => approve.mutate()}>
            {approve.isPending ? "Approving…" : "Approve plan"}
          </button>
        </div>
      ) : null}
      {data.status === "approved" ? <ExecuteForm plan={data} onDone={(p) => { refresh(p); setMessage("Plan started."); }} /> : null}

      {execution.data && live(shownStatus) ? <ExecutionControls execution={execution.data} onMessage={setMessage} /> : null}

      <h2 id="plan-steps-heading">Steps</h2>
      <ol className="steps" aria-labelledby="plan-steps-heading">
        {data.steps.map((step, index) => {
          const stepId = String(step.id ?? index);
          return (
            <li key={stepId} className="step" aria-labelledby={`plan-step-${index}`}>
              <div className="step__head">
                <h3 id={`plan-step-${index}`} className="mono">{stepId}</h3>
                {typeof step.name === "string" && step.name !== stepId ? <span className="muted">{step.name}</span> : null}
                <span className="tag">{String(step.type ?? "action")}{step.tool ? ` · ${String(step.tool)}` : ""}</span>
                {stepStatus.get(stepId) && data.status !== "draft" && data.status !== "approved" ? <StatusBadge status={stepStatus.get(stepId) ?? ""} /> : null}
                {data.corrected_steps.includes(stepId) ? <span className="tag">corrected</span> : null}
              </div>
              {isPlainObject(step.params) ? <pre className="code">{formatValue(step.params)}</pre> : null}
            </li>
          );
        })}
      </ol>

      <SaveAsWorkflow plan={data} onSaved={() => refresh()} />
    </section>
  );
}

function ApproveRefusal({ error }: { error: unknown }) {
  const verdicts = error instanceof ApiError && isPlainObject(error.details) && isPlainObject(error.details.verdicts)
    ? Object.entries(error.details.verdicts)
    : [];
  return (
    <div className="notice notice--error" role="alert">
      <p className="notice__title">Not approved: {errorMessage(error)}</p>
      {verdicts.length ? (
        <ul>
          {verdicts.map(([step, verdict]) => (
            <li key={step}>
              <span className="mono">{step}</span>: {verdict === null ? "cannot be judged before it runs" : String(verdict).replace(/_/g, " ")}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function ExecuteForm({ plan, onDone }: { plan: Plan; onDone: (plan: Plan) => void }) {
  const [mode, setMode] = useState(plan.mode);
  const [variables, setVariables] = useState(() => JSON.stringify(plan.values ?? {}, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const run = useMutation({ mutationFn: (body: { mode: PlanMode; variables: Record<string, unknown> }) => executePlan(plan.plan_id, body), onSuccess: onDone });
  const fieldErrors = run.error instanceof ApiError && run.error.status === 422 && isPlainObject(run.error.details) ? Object.entries(run.error.details) : [];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = variables.trim() ? JSON.parse(variables) : {};
    } catch (err) {
      setParseError(`Not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (!isPlainObject(parsed)) {
      setParseError("The variables are a JSON object.");
      return;
    }
    setParseError(null);
    run.mutate({ mode, variables: parsed });
  };
  return (
    <form className="card plan__action" onSubmit={submit} aria-labelledby="execute-heading">
      <h2 id="execute-heading">Execute</h2>
      <div className="plan-form__row">
        <div className="field">
          <label htmlFor="execute-mode">Mode</label>
          <select id="execute-mode" value={mode} onChange={(e) => isPlanMode(e.target.value) && setMode(e.target.value)}>
            {PLAN_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </div>
        <div className="field plan__variables">
          <label htmlFor="execute-variables">Variables (JSON)</label>
          <textarea id="execute-variables" className="mono" rows={4} value={variables} spellCheck={false}
            aria-invalid={parseError || fieldErrors.length ? true : undefined}
            aria-describedby={parseError || fieldErrors.length ? "execute-variables-error" : undefined}
            onChange={(e) => setVariables(e.target.value)} />
          {parseError || fieldErrors.length ? (
            <ul id="execute-variables-error" className="field__error">
              {parseError ? <li>✕ {parseError}</li> : null}
              {fieldErrors.map(([k, v]) => <li key={k}>✕ <strong className="mono">{k}</strong>: {Array.isArray(v) ? v.join(" ") : String(v)}</li>)}
            </ul>
          ) : null}
        </div>
      </div>
      {run.isError && !fieldErrors.length ? <ErrorNotice title="The plan did not start" error={run.error} /> : null}
      <button type="submit" className="button" disabled={run.isPending}>{run.isPending ? "Starting…" : "Execute plan"}</button>
    </form>
  );
}

function SaveAsWorkflow({ plan, onSaved }: { plan: Plan; onSaved: () => void }) {
  const [name, setName] = useState(plan.name);
  const save = useMutation({ mutationFn: () => savePlanAsWorkflow(plan.plan_id, name.trim()), onSuccess: onSaved });
  const savedId = save.data?.id ?? plan.saved_workflow_id;
  return (
    <form className="card plan__action" aria-labelledby="save-heading" onSubmit={(e) => { e.preventDefault(); if (!save.isPending) save.mutate(); }}>
      <h2 id="save-heading">Save as a workflow</h2>
      <p className="muted">A new workflow (version 1) with the steps as they stand, corrections included (leads).</p>
      {savedId ? (
        <p className="notice notice--info" role="status">
          Saved as workflow <Link to={`/workflows/${encodeURIComponent(String(savedId))}`}>{save.data?.name ?? savedId}</Link>.
        </p>
      ) : null}
      <div className="plan-form__row">
        <div className="field">
          <label htmlFor="save-name">Workflow name</label>
          <input id="save-name" type="text" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
      </div>
      {save.isError ? <ErrorNotice title="Not saved" error={save.error} /> : null}
      <button type="submit" className="button button--secondary" disabled={save.isPending}>{save.isPending ? "Saving…" : "Save as workflow"}</button>
    </form>
  );
}

function BackLink() {
  return (
    <p className="back">
      <Link to="/plans">← All plans</Link>
    </p>
  );
}
