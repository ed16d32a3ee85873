import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Execution, ExecutionStep } from "../api/types";
import { useIsLead } from "../auth/useAuth";
import { Dialog } from "../components/Dialog";
import { ErrorNotice } from "../components/QueryState";
import { formatValue, isPlainObject } from "../format";
import { retryStep } from "./api";
import { RerunDialog, ResumeDialog, RetryDialog, resumeChoices } from "./RecoveryDialogs";
import "./recovery.css";

type DialogName = "retry" | "resume" | "rerun" | "confirm" | null;

const RETRYABLE = new Set(["failed", "rejected"]);

/** The step a failed execution stopped at: the one its error names, else the first failed (or rejected) one. */
export function failedStep(execution: Pick<Execution, "error" | "steps">): ExecutionStep | null {
  const named = isPlainObject(execution.error) ? execution.error.step_id : null;
  return (
    execution.steps.find((s) => s.step_id === named && RETRYABLE.has(s.status)) ??
    execution.steps.find((s) => RETRYABLE.has(s.status)) ??
    null
  );
}

/** Why it failed, in the server's words: the execution's error message, else the step's error. */
export function failureReason(execution: Pick<Execution, "error">, step: ExecutionStep | null): string {
  if (isPlainObject(execution.error) && typeof execution.error.message === "string") return execution.error.message;
  if (step && typeof step.error === "string" && step.error) return step.error;
  if (execution.error !== undefined && execution.error !== null) return formatValue(execution.error);
  return "no reason was recorded";
}

/**
 * Why a plain retry should be confirmed, or null: the failed call may have had its effect (it timed out) or acts on
 * the world (an external or destructive tool), and a retry is a new call with a new idempotency key, which the other
 * side does not take for the same one.
 */
export function retryWarning(step: ExecutionStep): string | null {
  const risk = step.policy?.risk ?? null;
  const timedOut = typeof step.error === "string" && step.error.includes("timed out");
  if (!timedOut && risk !== "external" && risk !== "destructive") return null;
  return (
    (timedOut ? "The call timed out: it may have had its effect anyway. " : `Its tool is ${risk}. `) +
    "A retry is a new call with a new idempotency key, which the other side does not take for the first one."
  );
}

export const stepTitle = (step: Pick<ExecutionStep, "step_id" | "name">) =>
  step.name && step.name !== step.step_id ? `${step.name} (${step.step_id})` : step.step_id;

/**
 * A failed execution is not a dead end: the banner names the failed step and the reason, with the ways on beside
 * it — retry the step (same params, or changed), resume from a step that has not run, re-run the whole execution.
 * Shown on the execution page and on the coaching panel.
 */
export function FailureBanner({
  execution,
  onMessage,
  headingLevel = 2,
  rerun = true,
}: {
  execution: Execution;
  onMessage?: (message: string) => void;
  headingLevel?: 2 | 3;
  /** Offer "Re-run…" (a plan is not re-run: it is made again, or saved as a workflow). */
  rerun?: boolean;
}) {
  const queryClient = useQueryClient();
  const isLead = useIsLead();
  const [dialog, setDialog] = useState<DialogName>(null);
  const step = failedStep(execution);
  const reason = failureReason(execution, step);
  const choices = resumeChoices(execution);
  const canEdit = step !== null && (step.type === "action" || (step.type == null && !!step.tool));
  // a normal run skips the review the workflow is under: re-running one needs a lead, as starting one does
  const canRerun = execution.mode !== "normal" || isLead;

  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ["executions"] });
    void queryClient.invalidateQueries({ queryKey: ["coaching"] });
    void queryClient.invalidateQueries({ queryKey: ["plans"] });
  };
  const retry = useMutation({
    mutationFn: () => retryStep(execution.execution_id, step?.step_id ?? ""),
    onSuccess: (answer) => {
      refresh();
      onMessage?.(`Retried ${answer.step_id} as run ${answer.run ?? "?"} (a new attempt, with a new idempotency key).`);
    },
  });
  const done = (message: string) => {
    setDialog(null);
    refresh();
    onMessage?.(message);
  };
  const Heading = headingLevel === 2 ? "h2" : "h3";

  return (
    <section className="notice notice--error failure" aria-labelledby="failure-heading" data-testid="failure-banner">
      <Heading id="failure-heading" className="failure__title">
        <span aria-hidden="true">✕ </span>
        {step ? (
          <>
            Step {step.name && step.name !== step.step_id ? <>{step.name} </> : null}
            <span className="failure__step">{step.name && step.name !== step.step_id ? `(${step.step_id})` : step.step_id}</span>{" "}
            {step.status === "rejected" ? "was rejected" : "failed"}
          </>
        ) : (
          "This execution failed"
        )}
      </Heading>
      <p role="alert" className="failure__reason">
        <span className="failure__label">Reason:</span> <span className="mono">{reason}</span>
      </p>
      <div className="failure__actions" role="group" aria-label="Recover this execution">
        {step ? (
          <button
            type="button"
            className="button"
            onClick={() => (retryWarning(step) ? setDialog("confirm") : retry.mutate())}
            disabled={retry.isPending}
            title="Run the failed step again with the same params: a new attempt, with a new idempotency key"
          >
            {retry.isPending ? "Retrying…" : "Retry"}
          </button>
        ) : null}
        {canEdit ? (
          <button type="button" className="button button--secondary" onClick={() => setDialog("retry")}>
            Retry with changes…
          </button>
        ) : null}
        {choices.length > 0 ? (
          <button type="button" className="button button--secondary" onClick={() => setDialog("resume")}>
            Resume from…
          </button>
        ) : null}
        {rerun ? (
          <button
            type="button"
            className="button button--secondary"
            onClick={() => setDialog("rerun")}
            disabled={!canRerun}
            aria-describedby={canRerun ? undefined : "failure-rerun-lead"}
          >
            Re-run…
          </button>
        ) : null}
      </div>
      {rerun && !canRerun ? (
        <p id="failure-rerun-lead" className="muted failure__hint">
          This was a normal run (no review): re-running it needs a lead, as starting one does.
        </p>
      ) : null}
      {retry.isError ? <ErrorNotice title="The step was not retried" error={retry.error} /> : null}

      {dialog === "confirm" && step ? (
        <Dialog title={`Retry step ${stepTitle(step)}?`} onClose={() => setDialog(null)} closeButton={false}>
          <p className="dialog__warning">{retryWarning(step)}</p>
          <div className="dialog__actions">
            <button
              type="button"
              className="button"
              onClick={() => {
                setDialog(null);
                retry.mutate();
              }}
            >
              Retry anyway
            </button>
            <button type="button" className="button button--secondary" onClick={() => setDialog(null)}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </Dialog>
      ) : null}
      {dialog === "retry" && step ? (
        <RetryDialog
          executionId={execution.execution_id}
          step={step}
          reason={reason}
          onDone={done}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === "resume" ? (
        <ResumeDialog
          executionId={execution.execution_id}
          failed={step}
          choices={choices}
          onDone={done}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === "rerun" ? (
        <RerunDialog execution={execution} onDone={done} onClose={() => setDialog(null)} />
      ) : null}
    </section>
  );
}
