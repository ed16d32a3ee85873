import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { workflowOptionsQuery } from "../api/workflowOptions";
import { isTerminalStatus, type Execution, type ExecutionStep } from "../api/types";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { PolicyVerdictView } from "../approvals/PolicyVerdictView";
import { approvalQueuePath } from "../coaching/WaitingNotice";
import { ShortcutSheet } from "../coaching/ShortcutSheet";
import { useShortcuts } from "../coaching/useShortcuts";
import { Countdown } from "../control/Countdown";
import { ExecutionControls } from "../control/ExecutionControls";
import { questionGate } from "../control/types";
import { formatDateTime, formatValue } from "../format";
import { useDocumentTitle } from "../hooks";
import { AgentTranscript } from "../agent/AgentTranscript";
import { FailureBanner } from "../recovery/FailureBanner";
import { RerunNotice } from "../recovery/RerunNotice";
import { RunHistory, historyVersion } from "../recovery/RunHistory";

/** How often a running execution is re-read. */
export const EXECUTION_POLL_MS = 1000;

export const executionQueryKey = (id: string) => ["executions", "detail", id] as const;

const executionParams = (id: string) => ({ path: { execution_id: id } });

function hasValue(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "";
}

function isExecution(value: unknown): value is Execution {
  return typeof value === "object" && value !== null && "execution_id" in value && "status" in value;
}

export default function ExecutionDetailPage() {
  const { id = "" } = useParams<{ id: string }>();
  useDocumentTitle(`Execution ${id}`);
  const queryClient = useQueryClient();
  const [help, setHelp] = useState(false);
  const [message, setMessage] = useState("");
  useShortcuts({ "?": () => setHelp(true) });

  const execution = useQuery({
    queryKey: executionQueryKey(id),
    queryFn: ({ signal }) => unwrap(api.GET("/api/executions/{execution_id}", { params: executionParams(id), signal })),
    enabled: id !== "",
    // Poll once a second until the run reaches a terminal state; stop on errors
    // (the user can retry) so a missing execution is not hammered.
    refetchInterval: (query) => {
      if (query.state.status === "error") return false;
      const status = query.state.data?.status;
      return status !== undefined && isTerminalStatus(status) ? false : EXECUTION_POLL_MS;
    },
    refetchIntervalInBackground: false,
  });
  // the workflow's name, where the execution has only its id (the list the filters use, cached a minute)
  const workflows = useQuery({ ...workflowOptionsQuery, enabled: execution.isSuccess });

  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST("/api/executions/{execution_id}/cancel", { params: executionParams(id) })),
    onSuccess: (result) => {
      if (isExecution(result)) {
        queryClient.setQueryData(executionQueryKey(id), result);
      }
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
    },
  });

  const heading = (
    <h1 id="execution-heading">
      Execution <span className="mono">{id}</span>
    </h1>
  );

  if (execution.isPending) {
    return (
      <section aria-labelledby="execution-heading">
        <BackLink />
        {heading}
        <Loading label="Loading execution…" />
      </section>
    );
  }

  if (execution.isError) {
    return (
      <section aria-labelledby="execution-heading">
        <BackLink />
        {heading}
        <ErrorNotice
          title="Could not load this execution"
          error={execution.error}
          onRetry={() => void execution.refetch()}
        />
      </section>
    );
  }

  const data = execution.data;
  const terminal = isTerminalStatus(data.status);
  const workflowName = workflows.data?.find((w) => w.workflow_id === data.workflow_id)?.name;

  return (
    <section aria-labelledby="execution-heading">
      <BackLink />
      <div className="page-head">
        {heading}
        {data.mode === "coaching" || data.mode === "auto" ? (
          <Link to={`/executions/${encodeURIComponent(id)}/coach`} className="button button--secondary">
            Open coaching panel
          </Link>
        ) : null}
        <button type="button" className="button button--secondary" aria-keyshortcuts="Shift+?" onClick={() => setHelp(true)}>
          Shortcuts <kbd>?</kbd>
        </button>
        {!terminal ? (
          <button
            type="button"
            className="button button--danger"
            onClick={() => cancel.mutate()}
            disabled={cancel.isPending}
          >
            {cancel.isPending ? "Cancelling…" : "Cancel execution"}
          </button>
        ) : null}
      </div>

      {cancel.isError ? <ErrorNotice title="Could not cancel this execution" error={cancel.error} /> : null}

      <dl className="summary">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={data.status} />
            {!terminal ? <span className="muted live-hint"> (updating live)</span> : null}
          </dd>
        </div>
        <div>
          <dt>Workflow</dt>
          <dd>
            {workflowName ? (
              <>
                <Link to={`/workflows/${encodeURIComponent(data.workflow_id)}`}>{workflowName}</Link>{" "}
                <span className="mono muted">{data.workflow_id}</span>
              </>
            ) : (
              data.workflow_id
            )}{" "}
            <span className="muted">v{data.workflow_version}</span>
          </dd>
        </div>
        <div>
          <dt>Mode</dt>
          <dd>
            {data.mode}
            {/* a run of another mode that has a coaching session (its spot checks): said once, not "coachingcoaching" */}
            {data.is_coaching && data.mode !== "coaching" ? <> <span className="tag">coaching session</span></> : null}
          </dd>
        </div>
        <div>
          <dt>Progress</dt>
          <dd>
            <ProgressMeter progress={data.progress} label="Execution progress" />
          </dd>
        </div>
        {data.trigger ? (
          <div>
            <dt>Started by</dt>
            <dd data-trigger={data.trigger.kind}>
              {data.trigger.kind === "webhook" ? (
                <>
                  webhook “{data.trigger.name}” <span className="muted">delivery</span>{" "}
                  <span className="mono">{data.trigger.delivery_id}</span>
                </>
              ) : (
                <>
                  schedule “{data.trigger.name}”
                  {data.trigger.fire_at ? <span className="muted"> for {formatDateTime(data.trigger.fire_at)}</span> : null}
                </>
              )}
            </dd>
          </div>
        ) : null}
      </dl>

      {data.status === "failed" ? <FailureBanner execution={data} onMessage={setMessage} /> : null}
      {data.status === "cancelled" || data.status === "completed" ? (
        <RerunNotice execution={data} onMessage={setMessage} />
      ) : null}

      {data.status === "waiting_approval" ? (
        <div className="notice notice--info" role="status">
          <p className="notice__title">‖ Waiting for an approval</p>
          {data.gate?.message ? <p>{data.gate.message}</p> : null}
          <p>
            {data.gate?.approval_id ? (
              <Link to={approvalQueuePath(data.gate.approval_id)}>Decide the approval on the queue</Link>
            ) : (
              <Link to="/queue">Approvals are decided on the queue</Link>
            )}{" "}
            (approve, reject, or edit a tool call's params), if you are one of its approvers.
          </p>
        </div>
      ) : null}

      {data.gate?.deadline && !questionGate(data) ? (
        <Countdown deadline={data.gate.deadline} onTimeout={data.gate.on_timeout} what="This gate" />
      ) : null}

      {!terminal ? <ExecutionControls execution={data} onMessage={setMessage} /> : null}
      {message ? (
        <p className="notice notice--info" role="status">
          {message}
        </p>
      ) : null}
      {help ? <ShortcutSheet onClose={() => setHelp(false)} /> : null}

      <h2 id="steps-heading">Steps</h2>
      {data.steps.length === 0 ? (
        <p className="empty">No steps have run yet.</p>
      ) : (
        <ol className="steps" aria-labelledby="steps-heading">
          {data.steps.map((step, index) => (
            <StepItem key={`${step.step_id}-${index}`} step={step} index={index} executionId={data.execution_id} />
          ))}
        </ol>
      )}

      <RunHistory executionId={data.execution_id} live={!terminal} version={historyVersion(data)} />

      {/* Announces status changes to screen readers while the page polls. */}
      <p className="visually-hidden" aria-live="polite">
        Execution status: {statusLabel(data.status)}
      </p>
    </section>
  );
}

function StepItem({ step, index, executionId }: { step: ExecutionStep; index: number; executionId: string }) {
  const headingId = `step-${index}-heading`;
  return (
    <li className={`step step--${step.status}`} aria-labelledby={headingId}>
      <div className="step__head">
        <h3 id={headingId} className="mono">
          {step.step_id}
        </h3>
        {step.name && step.name !== step.step_id ? <span className="muted">{step.name}</span> : null}
        <StatusBadge status={step.status} />
      </div>
      {hasValue(step.output) ? (
        <>
          <h4 className="step__label">Output</h4>
          <pre className="code">{formatValue(step.output)}</pre>
        </>
      ) : (
        <p className="muted">No output yet.</p>
      )}
      {hasValue(step.decision) ? (
        <>
          <h4 className="step__label">Decision</h4>
          <pre className="code">{formatValue(step.decision)}</pre>
        </>
      ) : null}
      {step.policy ? <PolicyVerdictView verdict={step.policy} headingLevel={4} title="Policy" /> : null}
      {step.approval ? (
        <p className="step__approval">
          <span className="step__label">Approval</span>{" "}
          <StatusBadge status={step.approval.status === "pending" ? "waiting" : step.approval.status} />{" "}
          {step.approval.status === "pending" ? (
            <Link to={approvalQueuePath(step.approval.approval_id)}>
              Decide this {step.approval.kind === "tool_call" ? "tool call review" : "approval"} on the queue
            </Link>
          ) : (
            <span className="muted">
              {step.approval.kind === "tool_call" ? "tool call review" : "approval"} {step.approval.status}
            </span>
          )}
        </p>
      ) : null}
      {hasValue(step.error) ? (
        <div className="step__error">
          <h4 className="step__label">Error</h4>
          <pre className="code code--error">{formatValue(step.error)}</pre>
        </div>
      ) : null}
      {step.type === "agent" && step.status !== "pending" ? (
        <AgentTranscript executionId={executionId} stepId={step.step_id} stepStatus={step.status} headingLevel={4} />
      ) : null}
    </li>
  );
}

function BackLink() {
  return (
    <p className="back">
      <Link to="/executions">← All executions</Link>
    </p>
  );
}
