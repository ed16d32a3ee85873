import { useMutation } from "@tanstack/react-query";
import { Suspense, lazy, useMemo, useState, type FormEvent } from "react";
import { useNavigate } from "react-router-dom";
import { ApiError } from "../api/client";
import type { Execution, ExecutionStep } from "../api/types";
import { Dialog } from "../components/Dialog";
import { stepLabel } from "../control/types";
import { ErrorNotice, Loading } from "../components/QueryState";
import { isPlainObject } from "../format";
import { asCorrectionError, rerun, resumeFrom, retryStep, variableErrors } from "./api";
// the correction editor's styles (fields, errors, diff) wherever these dialogs open
import "../coaching/coaching.css";

// the correction editor (rjsf is large: its own chunk), the same form as a correction's and a step edit's
const CorrectionEditor = lazy(() => import("../coaching/CorrectionEditor"));

/**
 * "Retry with changes": the failed step's params as written in the correction editor; the server's 422 lands on the
 * field. A `{{ … }}` value is a template: the server renders it and checks what the step will run, so it is not
 * judged here (a literal typed in its place is).
 */
export function RetryDialog({
  executionId,
  step,
  reason,
  onDone,
  onClose,
}: {
  executionId: string;
  step: ExecutionStep;
  reason: string;
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  const target = useMemo(
    () => ({
      tool: step.definition?.tool ?? step.tool ?? null,
      params: isPlainObject(step.definition?.params) ? step.definition.params : {},
      params_schema: step.params_schema ?? null,
    }),
    [step],
  );
  const retry = useMutation({
    mutationFn: (params: Record<string, unknown>) => retryStep(executionId, step.step_id, params),
    onSuccess: (answer) =>
      onDone(`Retried ${answer.step_id} with the changed params, as run ${answer.run ?? "?"} (a new idempotency key).`),
  });
  return (
    <Dialog title={`Retry step ${stepLabel(step)} with changes`} onClose={onClose} wide>
      <p className="failure__dialog-reason">
        It failed with: <span className="mono">{reason}</span>
      </p>
      <p className="muted">
        The step runs again with these params, for this execution only (the workflow is unchanged). It is a new
        attempt: its tool call gets a new idempotency key.
      </p>
      <Suspense fallback={<Loading label="Loading the editor…" />}>
        <CorrectionEditor
          suggestion={target}
          sending={retry.isPending}
          serverError={asCorrectionError(retry.error)}
          onSubmit={(params) => retry.mutate(params)}
          onCancel={onClose}
          submitLabel="Retry with these params"
          diffTitle="Changes from the step as written"
          templates
        />
      </Suspense>
    </Dialog>
  );
}

/** A step that has not run, and whether "resume from" may choose it (the server's `resume_from`, and its reason). */
export interface ResumeChoice {
  step: ExecutionStep;
  allowed: boolean;
  reason: string | null;
  skips: string[];
}

/**
 * The steps "Resume from…" lists: each step that has not run, with the server's word on whether it may be chosen
 * (`execution.resume_from`, the rules resume-from itself applies). A server that does not say: every one, and its
 * refusal says why.
 */
export function resumeChoices(execution: Pick<Execution, "steps" | "resume_from">): ResumeChoice[] {
  const notRun = execution.steps.filter((s) => s.status === "pending");
  const options = execution.resume_from;
  if (!Array.isArray(options)) return notRun.map((step) => ({ step, allowed: true, reason: null, skips: [] }));
  const byId = new Map(notRun.map((s) => [s.step_id, s]));
  return options.flatMap((o) => {
    const step = byId.get(o.step_id);
    return step ? [{ step, allowed: o.allowed, reason: o.reason ?? null, skips: o.skips ?? [] }] : [];
  });
}

/**
 * "Resume from…": a step that has not run; the failed step (and what the chosen one waits for) is skipped. Only the
 * steps the server would take can be chosen; the others are listed greyed, each with the reason.
 */
export function ResumeDialog({
  executionId,
  failed,
  choices,
  onDone,
  onClose,
}: {
  executionId: string;
  failed: ExecutionStep | null;
  /** The steps that have not run, in the definition's order, and whether each can be chosen. */
  choices: ResumeChoice[];
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  const allowed = choices.filter((c) => c.allowed);
  const refused = choices.filter((c) => !c.allowed);
  const [stepId, setStepId] = useState(allowed[0]?.step.step_id ?? "");
  const chosen = allowed.find((c) => c.step.step_id === stepId);
  const resume = useMutation({
    mutationFn: () => resumeFrom(executionId, stepId),
    onSuccess: (answer) =>
      onDone(
        `Resumed from ${answer.step_id}` +
          (answer.skipped.length ? `; skipped ${answer.skipped.join(", ")}.` : "."),
      ),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!resume.isPending && chosen) resume.mutate();
  };
  return (
    <Dialog title="Resume from a step" onClose={onClose} closeButton={false}>
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor="resume-step">Go on from step</label>
          <select
            id="resume-step"
            value={stepId}
            onChange={(e) => setStepId(e.target.value)}
            aria-describedby={refused.length ? "resume-refused" : undefined}
          >
            {choices.map((c) => (
              <option key={c.step.step_id} value={c.step.step_id} disabled={!c.allowed}>
                {stepLabel(c.step)}
                {c.allowed ? "" : " (cannot be chosen)"}
              </option>
            ))}
          </select>
          <p className="field__hint">
            {failed ? `${stepLabel(failed)} is skipped` : "The failed step is skipped"}, and so are the steps the chosen one
            waits for that have not run. A step that reads the output of a skipped step is skipped too.
            {chosen && chosen.skips.length ? ` This skips ${chosen.skips.join(", ")}.` : ""}
          </p>
          {refused.length ? (
            <div id="resume-refused" className="resume__refused">
              <p className="muted">Cannot be chosen:</p>
              <ul>
                {refused.map((c) => (
                  <li key={c.step.step_id} className="muted">
                    <strong>{stepLabel(c.step)}</strong>: {c.reason ?? "the server refuses it"}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {!allowed.length ? (
            <p className="field__error">✕ No step that has not run can be resumed from: retry the failed step, or re-run.</p>
          ) : null}
        </div>
        {resume.isError ? <ErrorNotice title="The execution was not resumed" error={resume.error} /> : null}
        <SubmitOrClose label="Resume" busyLabel="Resuming…" busy={resume.isPending} disabled={!chosen} onClose={onClose} />
      </form>
    </Dialog>
  );
}

type Field = { name: string; kind: "string" | "number" | "boolean" | "json"; text: string; checked: boolean };

function fieldsOf(variables: Record<string, unknown>): Field[] {
  return Object.entries(variables).map(([name, value]) => {
    if (typeof value === "number") return { name, kind: "number", text: String(value), checked: false };
    if (typeof value === "boolean") return { name, kind: "boolean", text: "", checked: value };
    if (typeof value === "string") return { name, kind: "string", text: value, checked: false };
    return { name, kind: "json", text: JSON.stringify(value ?? null), checked: false };
  });
}

/** A field's value, or the reason it has none (a number that is not one, JSON that does not parse). */
function valueOf(field: Field): { value?: unknown; problem?: string } {
  if (field.kind === "boolean") return { value: field.checked };
  if (field.kind === "string") return { value: field.text };
  if (field.kind === "number") {
    const n = Number(field.text);
    return field.text.trim() !== "" && Number.isFinite(n) ? { value: n } : { problem: "must be a number" };
  }
  try {
    return { value: JSON.parse(field.text) };
  } catch {
    return { problem: "is not valid JSON" };
  }
}

/** "Re-run…": a new execution of the workflow with the same variables, or these; it opens when started. */
export function RerunDialog({
  execution,
  onDone,
  onClose,
}: {
  execution: Execution;
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const [fields, setFields] = useState<Field[]>(() => fieldsOf(execution.variables ?? {}));
  const [refused, setRefused] = useState(false);
  const start = useMutation({
    mutationFn: (variables: Record<string, unknown>) => rerun(execution.execution_id, variables),
    onSuccess: (answer) => {
      onDone(`Re-run started: execution ${answer.execution_id}.`);
      navigate(`/executions/${encodeURIComponent(answer.execution_id)}`);
    },
  });
  const server = variableErrors(start.error);
  const problems = Object.fromEntries(fields.map((f) => [f.name, valueOf(f).problem]));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (start.isPending) return;
    const bad = fields.find((f) => problems[f.name]);
    if (bad) {
      setRefused(true);
      document.getElementById(`rerun-${bad.name}`)?.focus();
      return;
    }
    start.mutate(Object.fromEntries(fields.map((f) => [f.name, valueOf(f).value])));
  };
  const set = (name: string, change: Partial<Field>) =>
    setFields((prev) => prev.map((f) => (f.name === name ? { ...f, ...change } : f)));
  const other = start.error && !(start.error instanceof ApiError && start.error.status === 422) ? start.error : null;
  return (
    <Dialog title="Re-run this execution" onClose={onClose} closeButton={false}>
      <form onSubmit={submit} noValidate>
        <p className="muted">
          A new execution of the workflow (its current version), linked to this one, in{" "}
          {execution.mode === "normal" ? "normal mode" : "the workflow's mode"}.
          {fields.length ? " Its variables, as this run had them:" : " The workflow takes no variables."}
        </p>
        {fields.map((f) => {
          const id = `rerun-${f.name}`;
          const problem = (refused ? problems[f.name] : undefined) ?? server[f.name]?.join(" ");
          return (
            <div className="field" key={f.name}>
              {f.kind === "boolean" ? (
                <label htmlFor={id} className="field__check">
                  <input id={id} type="checkbox" checked={f.checked} onChange={(e) => set(f.name, { checked: e.target.checked })} />{" "}
                  {f.name}
                </label>
              ) : (
                <>
                  <label htmlFor={id}>
                    {f.name} {f.kind === "json" ? <span className="muted">(JSON)</span> : null}
                  </label>
                  <input
                    id={id}
                    type="text"
                    inputMode={f.kind === "number" ? "decimal" : undefined}
                    autoComplete="off"
                    className={f.kind === "json" ? "mono" : undefined}
                    value={f.text}
                    aria-invalid={problem ? true : undefined}
                    aria-describedby={problem ? `${id}-error` : undefined}
                    onChange={(e) => set(f.name, { text: e.target.value })}
                  />
                </>
              )}
              {problem ? (
                <p id={`${id}-error`} className="field__error">
                  ✕ {problem}
                </p>
              ) : null}
            </div>
          );
        })}
        {server[""] ? <p className="field__error">✕ {server[""].join(" ")}</p> : null}
        {other ? <ErrorNotice title="The execution was not re-run" error={other} /> : null}
        <SubmitOrClose label="Start the re-run" busyLabel="Starting…" busy={start.isPending} onClose={onClose} />
      </form>
    </Dialog>
  );
}

/** A recovery form's buttons: its submit (Enter; disabled while it runs) and Close (Esc). */
function SubmitOrClose({
  label,
  busyLabel,
  busy,
  disabled = false,
  onClose,
}: {
  label: string;
  busyLabel: string;
  busy: boolean;
  disabled?: boolean;
  onClose: () => void;
}) {
  return (
    <div className="dialog__actions">
      <button type="submit" className="button" disabled={busy || disabled}>
        {busy ? busyLabel : label} <kbd>Enter</kbd>
      </button>
      <button type="button" className="button button--secondary" onClick={onClose}>
        Close <kbd>Esc</kbd>
      </button>
    </div>
  );
}
