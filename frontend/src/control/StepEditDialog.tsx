import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Suspense, lazy, useMemo, useState } from "react";
import { ApiError } from "../api/client";
import { Dialog } from "../components/Dialog";
import { ErrorNotice, Loading } from "../components/QueryState";
import { isPlainObject } from "../format";
import { applyCorrection, type StepUpdate } from "./api";
import { splitStepErrors } from "./stepErrors";
import { StepSelect } from "./StepSelect";
import { stepLabel, type ControlStep, type StepsDialogProps } from "./types";

// the same editor as a correction's (rjsf is large: its own chunk)
const CorrectionEditor = lazy(() => import("../coaching/CorrectionEditor"));

type Numbers = { timeout_s: string; retries: string };

function numberProblem(name: keyof Numbers, text: string): string | null {
  if (text.trim() === "") return null;
  const value = Number(text);
  if (!Number.isFinite(value)) return "must be a number";
  if (name === "retries" && (!Number.isInteger(value) || value < 0)) return "must be a whole number ≥ 0";
  if (name === "timeout_s" && value <= 0) return "must be a number of seconds > 0";
  return null;
}

/**
 * `e`: change a step that has not run yet, for this execution only: its params
 * in the correction editor's form (drawn from the tool's schema) or as JSON,
 * and its timeout and retries. The server's 422 lands on the fields it names. Its `steps`: those that may be
 * changed.
 */
export function StepEditDialog({ executionId, steps, onDone, onClose }: StepsDialogProps) {
  const [stepId, setStepId] = useState(steps[0]?.step_id ?? "");
  const step = steps.find((s) => s.step_id === stepId) ?? steps[0];
  return (
    <Dialog title={`Edit step ${step ? stepLabel(step) : ""}`} onClose={onClose} wide>
      {steps.length > 1 ? (
        <div className="field">
          <label htmlFor="edit-step">Step</label>
          <StepSelect id="edit-step" steps={steps} value={stepId} onChange={setStepId} label={stepLabel} />
        </div>
      ) : null}
      {step ? <StepEditor key={step.step_id} executionId={executionId} step={step} onDone={onDone} onClose={onClose} /> : null}
    </Dialog>
  );
}

function StepEditor({
  executionId,
  step,
  onDone,
  onClose,
}: {
  executionId: string;
  step: ControlStep;
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const definition = step.definition ?? {};
  const target = useMemo(
    () => ({
      tool: definition.tool ?? step.tool ?? null,
      params: isPlainObject(definition.params) ? definition.params : {},
      params_schema: step.params_schema ?? null,
    }),
    [definition.tool, definition.params, step.tool, step.params_schema],
  );
  const written: Numbers = {
    timeout_s: definition.timeout_s === undefined ? "" : String(definition.timeout_s),
    retries: definition.retries === undefined ? "" : String(definition.retries),
  };
  const [numbers, setNumbers] = useState<Numbers>(written);
  const [refused, setRefused] = useState(false);
  const save = useMutation({
    mutationFn: (update: StepUpdate) => applyCorrection(executionId, step.step_id, update),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
      void queryClient.invalidateQueries({ queryKey: ["coaching"] });
      void queryClient.invalidateQueries({ queryKey: ["plans"] });
      onDone(`Step ${step.step_id} changed: it runs as edited.`);
    },
  });
  const errors = splitStepErrors(save.error);
  const other = save.error && !(save.error instanceof ApiError && save.error.status === 422) ? save.error : null;
  const local = {
    timeout_s: numberProblem("timeout_s", numbers.timeout_s),
    retries: numberProblem("retries", numbers.retries),
  };

  const submit = (params: Record<string, unknown>) => {
    if (local.timeout_s || local.retries) {
      setRefused(true);
      document.getElementById(local.timeout_s ? "edit-timeout" : "edit-retries")?.focus();
      return;
    }
    setRefused(false);
    const update: StepUpdate = { params };
    for (const name of ["timeout_s", "retries"] as const) {
      if (numbers[name] !== written[name] && numbers[name].trim() !== "") update[name] = Number(numbers[name]);
    }
    save.mutate(update);
  };

  const fieldError = (name: keyof Numbers) =>
    (refused ? local[name] : null) ?? (errors.fields[name] ? errors.fields[name].join(" ") : null);

  return (
    <>
      {errors.fields[""] || Object.keys(errors.fields).some((k) => k !== "timeout_s" && k !== "retries" && k !== "") ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">The server refused the change:</p>
          <ul>
            {Object.entries(errors.fields)
              .filter(([k]) => k !== "timeout_s" && k !== "retries")
              .map(([k, messages]) => (
                <li key={k}>
                  <strong>{k || "step"}</strong>: {messages.join(" ")}
                </li>
              ))}
          </ul>
        </div>
      ) : null}
      {other ? <ErrorNotice title="The step was not changed" error={other} /> : null}
      <Suspense fallback={<Loading label="Loading the step editor…" />}>
        <CorrectionEditor
          suggestion={target}
          sending={save.isPending}
          serverError={errors.params}
          onSubmit={submit}
          onCancel={onClose}
          submitLabel="Save the step"
          templates
          diffTitle="Changes from the step as written"
        >
          <fieldset className="step-edit__numbers">
            <legend>Run</legend>
            {(["timeout_s", "retries"] as const).map((name) => {
              const id = name === "timeout_s" ? "edit-timeout" : "edit-retries";
              const problem = fieldError(name);
              return (
                <div className="field" key={name}>
                  <label htmlFor={id}>{name === "timeout_s" ? "Timeout (seconds)" : "Retries"}</label>
                  <input
                    id={id}
                    type="number"
                    inputMode="decimal"
                    min={name === "retries" ? 0 : undefined}
                    value={numbers[name]}
                    placeholder={name === "timeout_s" ? "300 (default)" : "0 (default)"}
                    aria-invalid={problem ? true : undefined}
                    aria-describedby={problem ? `${id}-error` : undefined}
                    onChange={(e) => setNumbers((prev) => ({ ...prev, [name]: e.target.value }))}
                  />
                  {problem ? (
                    <p id={`${id}-error`} className="field__error">
                      ✕ {problem}
                    </p>
                  ) : null}
                </div>
              );
            })}
          </fieldset>
        </CorrectionEditor>
      </Suspense>
    </>
  );
}
