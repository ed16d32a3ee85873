import { useId, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import { LLM_PROVIDER_MISSING, LLM_SETTINGS_PATH } from "../admin/llmApi";
import type { ExecutionMode, Workflow } from "../api/types";
import { satisfies } from "../approvals/eligibility";
import { Dialog } from "../components/Dialog";
import { serverFieldErrors } from "../policies/fieldErrors";

/** A declared input variable of a workflow (core/workflow: `{type, default, required, description}`). */
export interface VariableSpec {
  type?: string;
  default?: unknown;
  required?: boolean;
  description?: string;
}

export interface StartRequest {
  workflow: Workflow;
  mode: ExecutionMode;
  variables: Record<string, unknown>;
}

const MODE_HINTS: Record<ExecutionMode, string> = {
  coaching: "every step is suggested to an operator and decided in the queue",
  auto: "runs unattended; policy-forced reviews and spot checks still go to a person",
  normal: "runs with no review but what policy forces (leads only)",
};

/** The modes `role` may start `workflow` in: its own first; auto only once it is promoted; normal for leads. */
export function startModes(workflow: Workflow, role: string | null): ExecutionMode[] {
  const modes: ExecutionMode[] = [workflow.mode === "auto" ? "auto" : "coaching"];
  if (!modes.includes("coaching")) modes.push("coaching");
  if (satisfies(role, "lead")) modes.push("normal");
  return modes;
}

/**
 * The declared variables as specs: a definition may write `who: world` for a string defaulting to "world"
 * (core/workflow), which is `{default: "world"}` here.
 */
export function variableSpecs(variables: Record<string, unknown> | undefined): [string, VariableSpec][] {
  return Object.entries(variables ?? {}).map(([name, raw]) => [
    name,
    raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as VariableSpec) : { default: raw },
  ]);
}

function initialText(spec: VariableSpec): string {
  if (spec.default === undefined || spec.default === null) return "";
  return typeof spec.default === "string" ? spec.default : JSON.stringify(spec.default);
}

/** The typed value of a field, or undefined when left empty (the server then applies the default). */
function parseValue(type: string, text: string): { value?: unknown; problem?: string } {
  if (text.trim() === "") return {};
  if (type === "string") return { value: text };
  if (type === "number" || type === "integer") {
    const value = Number(text);
    if (!Number.isFinite(value)) return { problem: `must be a ${type}` };
    return { value };
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    // `any` takes plain text as a string; the structured types need JSON
    return type === "any" ? { value: text } : { problem: `must be JSON (${type})` };
  }
}

/**
 * The Workflows page's start dialog: the mode (the workflow's own by default, so a run of a workflow in coaching
 * reaches the queue) and the variables the workflow declares, typed, with their defaults; the server's 422 is
 * shown on the fields it names.
 */
export function StartDialog({
  workflow,
  role,
  busy,
  error,
  onStart,
  onCancel,
}: {
  workflow: Workflow;
  role: string | null;
  busy: boolean;
  error: unknown;
  onStart: (request: StartRequest) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const specs = variableSpecs(workflow.variables);
  const modes = startModes(workflow, role);
  const [mode, setMode] = useState(modes[0]);
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(specs.map(([name, spec]) => [name, initialText(spec)])),
  );
  const [flags, setFlags] = useState<Record<string, boolean>>(() =>
    Object.fromEntries(specs.map(([name, spec]) => [name, spec.default === true])),
  );
  const [local, setLocal] = useState<Record<string, string>>({});

  const server = serverFieldErrors(error);
  const problems: Record<string, string> = { ...local };
  for (const [field, message] of Object.entries(server)) {
    const name = field.replace(/^variables\./, "");
    if (!(name in problems)) problems[name] = message;
  }
  const shownNames = new Set(specs.map(([name]) => name).concat("mode"));
  const unplaced = Object.entries(problems).filter(([name]) => !shownNames.has(name));
  const failure = error && Object.keys(server).length === 0 ? error : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const variables: Record<string, unknown> = {};
    const found: Record<string, string> = {};
    for (const [name, spec] of specs) {
      const type = spec.type ?? "any";
      if (type === "boolean") {
        variables[name] = flags[name] ?? false;
        continue;
      }
      const parsed = parseValue(type, texts[name] ?? "");
      if (parsed.problem) found[name] = parsed.problem;
      else if (parsed.value !== undefined) variables[name] = parsed.value;
      else if (spec.required && spec.default === undefined) found[name] = "is required";
    }
    setLocal(found);
    if (Object.keys(found).length === 0) onStart({ workflow, mode, variables });
  };

  return (
    <Dialog title={`Run “${workflow.name}”`} onClose={() => !busy && onCancel()} closeButton={false}>
      <form className="form start-form" onSubmit={submit} noValidate aria-label={`Run ${workflow.name}`}>
        <div className="field">
          <label htmlFor={`${id}-mode`}>Mode</label>
          <select
            id={`${id}-mode`}
            value={mode}
            onChange={(e) => setMode(e.target.value as ExecutionMode)}
            aria-describedby={`${id}-mode-hint`}
            aria-invalid={problems.mode ? true : undefined}
          >
            {modes.map((m) => (
              <option key={m} value={m}>
                {m === workflow.mode ? `${m} (the workflow's mode)` : m}
              </option>
            ))}
          </select>
          <small id={`${id}-mode-hint`} className="muted">
            {MODE_HINTS[mode] ?? ""}
          </small>
          {problems.mode ? (
            <small className="field-error" role="alert">
              {problems.mode}
            </small>
          ) : null}
        </div>

        {specs.length === 0 ? <p className="muted">This workflow takes no variables.</p> : null}
        {specs.map(([name, spec]) => {
          const type = spec.type ?? "any";
          const inputId = `${id}-var-${name}`;
          const hint = [type, spec.required ? "required" : null, spec.description || null].filter(Boolean).join(" · ");
          const describedBy = `${inputId}-hint${problems[name] ? ` ${inputId}-error` : ""}`;
          const common = {
            id: inputId,
            name,
            "aria-describedby": describedBy,
            "aria-invalid": problems[name] ? true : undefined,
          } as const;
          return (
            <div className="field" key={name}>
              <label htmlFor={inputId}>
                {name}
                {spec.required ? <span aria-hidden="true"> *</span> : null}
              </label>
              {type === "boolean" ? (
                <input
                  {...common}
                  type="checkbox"
                  checked={flags[name] ?? false}
                  onChange={(e) => setFlags((f) => ({ ...f, [name]: e.target.checked }))}
                />
              ) : type === "object" || type === "array" ? (
                <textarea
                  {...common}
                  rows={3}
                  className="mono"
                  value={texts[name] ?? ""}
                  onChange={(e) => setTexts((t) => ({ ...t, [name]: e.target.value }))}
                />
              ) : (
                <input
                  {...common}
                  type={type === "number" || type === "integer" ? "number" : "text"}
                  step={type === "integer" ? 1 : type === "number" ? "any" : undefined}
                  required={spec.required || undefined}
                  value={texts[name] ?? ""}
                  onChange={(e) => setTexts((t) => ({ ...t, [name]: e.target.value }))}
                />
              )}
              <small id={`${inputId}-hint`} className="muted">
                {hint}
              </small>
              {problems[name] ? (
                <small id={`${inputId}-error`} className="field-error" role="alert">
                  {problems[name]}
                </small>
              ) : null}
            </div>
          );
        })}

        {failure instanceof ApiError && failure.code === LLM_PROVIDER_MISSING ? (
          <div className="notice notice--error" role="alert">
            <p className="notice__title">This workflow needs an LLM provider</p>
            <p>{errorMessage(failure)}</p>
            {role === "admin" ? (
              <p>
                <Link to={LLM_SETTINGS_PATH}>Open Settings → LLM provider</Link>
              </p>
            ) : (
              <p>Ask an admin of this workspace to set one in Settings → LLM provider.</p>
            )}
          </div>
        ) : unplaced.length > 0 || failure ? (
          <div className="notice notice--error" role="alert">
            {failure ? errorMessage(failure) : unplaced.map(([name, message]) => `${name}: ${message}`).join("; ")}
          </div>
        ) : null}

        <div className="dialog__actions">
          <button type="button" className="button button--secondary" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button" aria-busy={busy || undefined} disabled={busy}>
            {busy ? "Starting…" : "Start run"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
