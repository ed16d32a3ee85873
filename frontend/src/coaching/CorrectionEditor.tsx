import Form from "@rjsf/core";
import type { IChangeEvent } from "@rjsf/core";
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { ApiError } from "../api/client";
import { ErrorNotice } from "../components/QueryState";
import { diffParams } from "./diff";
import { ParamsDiff } from "./ParamsDiff";
import "./editor.css";
import { FORM_BUTTONS } from "./formButtons";
import { isPlainObject } from "../format";
import { interpretingValidator, toErrorSchema } from "./jsonSchema";
import { formSchema, formUiSchema, serverFieldErrors, validateParams, type FieldError } from "./schemaForm";
import type { JsonSchema, Suggestion } from "./types";

type Tab = "form" | "json";
type Params = Record<string, unknown>;

function fieldLabel(path: string): string {
  return path ? path : "params";
}

/**
 * `c`: corrects the suggested params. A form drawn from the tool's JSON
 * Schema, or the raw JSON; a diff against the suggestion; the tool's schema
 * checked before anything is sent, and the server's 422 details shown on the
 * fields they name. Loaded on demand: rjsf is large.
 */
export default function CorrectionEditor({
  suggestion,
  sending,
  serverError,
  onSubmit,
  onCancel,
  submitLabel = "Send correction",
  diffTitle = "Changes from the suggestion",
  templates = false,
  children,
}: {
  /** What is corrected: a suggestion, or a pending step's tool, params and schema (the step editor). */
  suggestion: Pick<Suggestion, "tool" | "params" | "params_schema"> & Partial<Pick<Suggestion, "definition_params">>;
  sending: boolean;
  /** The answer to the last send, when it failed. */
  serverError: unknown;
  onSubmit: (params: Params) => void;
  onCancel: () => void;
  submitLabel?: string;
  diffTitle?: string;
  /** The params are a step's as written (the step editor): a `{{ … }}` value is a template, judged once rendered. */
  templates?: boolean;
  /** More fields, shown after the params (the step editor's timeout and retries). */
  children?: ReactNode;
}) {
  const suggested = useMemo<Params>(() => (isPlainObject(suggestion.params) ? suggestion.params : {}), [suggestion]);
  const [draft, setDraft] = useState<Params>(suggested);
  const [tab, setTab] = useState<Tab>("form");
  const [raw, setRaw] = useState(() => JSON.stringify(suggested, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const [refused, setRefused] = useState(false);
  const sentDraft = useRef<string | null>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const summaryRef = useRef<HTMLDivElement>(null);

  const drawnSchema = useMemo(
    () => formSchema(suggestion.params_schema ?? { type: "object" }, suggested, suggestion.definition_params, templates),
    [suggestion.params_schema, suggested, suggestion.definition_params, templates],
  );
  const uiSchema = useMemo(
    () => ({ ...formUiSchema(drawnSchema), "ui:submitButtonOptions": { norender: true } }),
    [drawnSchema],
  );
  // judged against the drawn schema: the tool's, and the types (and required params) of what it does not describe
  const clientErrors = useMemo(
    () => validateParams(drawnSchema as JsonSchema, draft, templates),
    [drawnSchema, draft, templates],
  );
  // The server's field errors belong to what was sent: they go once the params change again.
  const isSent = sentDraft.current === JSON.stringify(draft);
  const serverErrors = isSent ? serverFieldErrors(serverError) : [];
  // A policy's refusal (409 policy_denied) of the call these params make: shown beside the fields changed from the
  // suggestion (what made the call the policy judged), the typed params kept to change again.
  const denied = serverError instanceof ApiError && serverError.status === 409 && serverError.code === "policy_denied";
  const deniedErrors: FieldError[] =
    denied && isSent
      ? policyFieldErrors(suggested, draft, serverError.message)
      : [];
  const fieldErrors: FieldError[] = [...clientErrors, ...serverErrors, ...deniedErrors];
  const otherServerError =
    serverError && !(serverError instanceof ApiError && serverError.status === 422) && !denied ? serverError : null;

  // Focus goes to the first field once the (lazily loaded) editor is there.
  useEffect(() => {
    rootRef.current?.querySelector<HTMLElement>("input, textarea, select")?.focus();
  }, []);

  const send = () => {
    if (parseError || clientErrors.length > 0) {
      setRefused(true);
      summaryRef.current?.focus();
      return;
    }
    setRefused(false);
    sentDraft.current = JSON.stringify(draft);
    onSubmit(draft);
  };

  const switchTab = (next: Tab) => {
    if (next === tab) return;
    if (next === "json") {
      setRaw(JSON.stringify(draft, null, 2));
      setParseError(null);
    }
    setTab(next);
  };

  const onRawChange = (text: string) => {
    setRaw(text);
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isPlainObject(parsed)) {
        setParseError("The params must be a JSON object ({ … }).");
        return;
      }
      setParseError(null);
      setDraft(parsed);
    } catch (err) {
      setParseError(`Not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const onTabKeyDown = (event: KeyboardEvent<HTMLButtonElement>) => {
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      const next = tab === "form" ? "json" : "form";
      switchTab(next);
      document.getElementById(`correction-tab-${next}`)?.focus();
    }
  };

  const showSummary =
    (refused && (parseError || clientErrors.length > 0)) || serverErrors.length > 0 || (denied && isSent);

  return (
    <div
      ref={rootRef}
      className="correction-editor"
      onKeyDown={(e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          send();
        }
      }}
    >
      <p className="muted">
        Tool <span className="mono">{suggestion.tool ?? "(none)"}</span>. Edit the params in the form or as JSON; the
        step runs with them once sent.
      </p>

      <div
        ref={summaryRef}
        tabIndex={-1}
        className={showSummary ? "notice notice--error correction-editor__summary" : "visually-hidden"}
        role="alert"
      >
        {showSummary ? (
          <>
            <p className="notice__title">
              {denied && isSent
                ? `Refused by the policy: ${serverError.message}. Change the params and send again.`
                : serverErrors.length > 0
                  ? "The server refused the correction:"
                  : "Not sent: fix these first."}
            </p>
            <ul>
              {parseError ? <li>Raw JSON: {parseError}</li> : null}
              {(serverErrors.length > 0 ? serverErrors : denied && isSent ? deniedErrors : clientErrors).map((error, i) => (
                <li key={`${error.path}-${i}`}>
                  <strong>{fieldLabel(error.path)}</strong>: {error.message}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
      {otherServerError ? <ErrorNotice title="The correction was not applied" error={otherServerError} /> : null}

      <div role="tablist" aria-label="Edit the params as" className="tabs">
        {(["form", "json"] as const).map((name) => (
          <button
            key={name}
            id={`correction-tab-${name}`}
            type="button"
            role="tab"
            className="tabs__tab"
            aria-selected={tab === name}
            aria-controls={`correction-panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => switchTab(name)}
            onKeyDown={onTabKeyDown}
          >
            {name === "form" ? "Form" : "Raw JSON"}
          </button>
        ))}
      </div>

      {tab === "form" ? (
        <div id="correction-panel-form" role="tabpanel" aria-labelledby="correction-tab-form" className="tabs__panel">
          {parseError ? (
            <p className="notice notice--warning">The raw JSON has an error; the form shows the last valid params.</p>
          ) : null}
          <Form
            tagName="div"
            schema={drawnSchema}
            uiSchema={uiSchema}
            formData={draft}
            validator={interpretingValidator}
            idPrefix="correction"
            showErrorList={false}
            noHtml5Validate
            extraErrors={toErrorSchema(fieldErrors)}
            experimental_defaultFormStateBehavior={{ emptyObjectFields: "skipDefaults" }}
            templates={{ ButtonTemplates: FORM_BUTTONS }}
            onChange={(event: IChangeEvent<Params>) => setDraft(isPlainObject(event.formData) ? event.formData : {})}
          />
        </div>
      ) : (
        <div id="correction-panel-json" role="tabpanel" aria-labelledby="correction-tab-json" className="tabs__panel">
          <div className="field">
            <label htmlFor="correction-json">Params as JSON</label>
            <textarea
              id="correction-json"
              className="mono correction-editor__json"
              rows={12}
              spellCheck={false}
              value={raw}
              aria-invalid={parseError ? true : undefined}
              aria-describedby={parseError ? "correction-json-error" : undefined}
              onChange={(e) => onRawChange(e.target.value)}
            />
            {parseError ? (
              <p id="correction-json-error" className="field__error">
                ✕ {parseError}
              </p>
            ) : null}
            {!parseError && fieldErrors.length > 0 ? (
              <ul className="field__error correction-editor__json-errors">
                {fieldErrors.map((error, i) => (
                  <li key={`${error.path}-${i}`}>
                    ✕ <strong>{fieldLabel(error.path)}</strong>: {error.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        </div>
      )}

      {children}

      <ParamsDiff title={diffTitle} before={suggested} after={draft} />

      <div className="dialog__actions">
        <button type="button" className="button" disabled={sending} onClick={send}>
          {sending ? "Sending…" : submitLabel} <kbd>Ctrl+Enter</kbd>
        </button>
        <button type="button" className="button button--secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A policy's refusal on each field the params change from the suggested ones (on the params when none changed). */
function policyFieldErrors(suggested: Params, draft: Params, message: string): FieldError[] {
  const changed = [...new Set(diffParams(suggested, draft).map((d) => (d.path === "(all params)" ? "" : d.path)))];
  return (changed.length ? changed : [""]).map((path) => ({ path, message }));
}
