import { useId, useState, type FormEvent, type ReactNode } from "react";
import { errorMessage } from "../api/client";
import { effectLabel } from "../approvals/PolicyVerdictView";
import type { PolicyEffect } from "../approvals/types";
import type { WorkflowMetrics } from "../api/metrics";
import { serverFieldErrors } from "./fieldErrors";
import { RuleReplay } from "./RuleReplay";
import { draftToRule, toDraft, type Draft } from "./ruleDraft";
import { EFFECTS, FALLBACKS, RISKS, STEP_TYPES, type PolicyFallback, type PolicyRule, type PolicyRuleIn } from "./types";

/** Which form field shows a server error for `field` (`match.risk[1]` → `match.risk`). */
const FIELD_OF = (field: string) => field.replace(/\[\d+\]$/, "");
const SHOWN_FIELDS = new Set([
  "name", "effect", "reason", "order", "enabled", "scope.workflow_id", "scope.user", "match.tool", "match.step_type",
  "match.risk", "match.workflow_id", "match.user", "match.agent_step", "match.agent", "match.sql", "match.host_not_in",
  "match.path_outside", "match.params",
]);

/**
 * Create or edit a policy rule. Checks what it can (a name, a whole order) before sending; the server checks the
 * rest and its 422 shows on the field it names (`match.params`, `match.tool`, `effect`…); a field it names that
 * the form has no input for is listed above the buttons.
 */
export function RuleForm({
  rule,
  workflows,
  saving,
  error,
  onSubmit,
  onCancel,
}: {
  rule: PolicyRule | null;
  workflows: readonly Pick<WorkflowMetrics, "workflow_id" | "name">[];
  saving: boolean;
  error: unknown;
  onSubmit: (rule: PolicyRuleIn) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>(() => toDraft(rule));
  const [problems, setProblems] = useState<Record<string, string>>({});
  // the replay's 422 on the rule's own fields (`match.params`…), shown on them like a save's
  const [replayProblems, setReplayProblems] = useState<Record<string, string>>({});
  const server = { ...replayProblems, ...serverFieldErrors(error) };
  const shown: Record<string, string> = { ...problems };
  const elsewhere: [string, string][] = [];
  for (const [field, message] of Object.entries(server)) {
    const key = FIELD_OF(field);
    if (SHOWN_FIELDS.has(key)) shown[key] = shown[key] ? `${shown[key]} ${message}` : message;
    else elsewhere.push([field, message]);
  }
  const failure = error && Object.keys(serverFieldErrors(error)).length === 0 ? error : null;
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  /** The rule as written, or null (its problems shown, the first one focused). */
  const checkDraft = () => {
    const checked = draftToRule(draft);
    setProblems(checked.problems);
    if (!checked.rule) document.getElementById(`${id}-${Object.keys(checked.problems)[0]}`)?.focus();
    return checked.rule ?? null;
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (saving) return;
    setReplayProblems({});
    const rule = checkDraft();
    if (rule) onSubmit(rule);
  };

  /** A labelled field with its hint and error (`name` is the server's field name). */
  const field = (name: string, label: string, hint: string | null, input: (props: FieldProps) => ReactNode) => {
    const inputId = `${id}-${name}`;
    const describedBy = [hint ? `${inputId}-hint` : "", shown[name] ? `${inputId}-error` : ""].filter(Boolean).join(" ");
    return (
      <div className="field" key={name}>
        <label htmlFor={inputId}>{label}</label>
        {input({ id: inputId, "aria-describedby": describedBy || undefined, "aria-invalid": shown[name] ? true : undefined })}
        {hint ? (
          <small id={`${inputId}-hint`} className="muted">
            {hint}
          </small>
        ) : null}
        {shown[name] ? (
          <small id={`${inputId}-error`} className="field-error" role="alert">
            ✕ {label}: {shown[name]}
          </small>
        ) : null}
      </div>
    );
  };

  return (
    <form onSubmit={submit} noValidate className="rule-form" aria-label={rule ? `Edit rule ${rule.name}` : "New rule"}>
      <fieldset>
        <legend>Rule</legend>
        <div className="rule-form__grid">
          {field("name", "Name", null, (p) => (
            <input {...p} type="text" value={draft.name} onChange={(e) => set("name", e.target.value)} />
          ))}
          {field("effect", "Effect", "what happens to a call the rule matches", (p) => (
            <select {...p} value={draft.effect} onChange={(e) => set("effect", e.target.value as PolicyEffect)}>
              {EFFECTS.map((e) => (
                <option key={e} value={e}>
                  {effectLabel(e)} ({e})
                </option>
              ))}
            </select>
          ))}
          {draft.effect === "confirm" &&
            field("fallback", "If the agent's client cannot ask", "what applies when nobody at the agent can be asked", (p) => (
              <select {...p} value={draft.fallback} onChange={(e) => set("fallback", e.target.value as PolicyFallback)}>
                {FALLBACKS.map((f) => (
                  <option key={f} value={f}>
                    {effectLabel(f)} ({f})
                  </option>
                ))}
              </select>
            ))}
          {field("order", "Order", "lower goes first among rules of the same scope", (p) => (
            <input {...p} type="text" inputMode="numeric" value={draft.order} onChange={(e) => set("order", e.target.value)} />
          ))}
          <div className="field rule-form__check">
            <input
              id={`${id}-enabled`}
              type="checkbox"
              checked={draft.enabled}
              onChange={(e) => set("enabled", e.target.checked)}
            />
            <label htmlFor={`${id}-enabled`}>Enabled</label>
          </div>
        </div>
        {field("reason", "Reason", "shown to whoever is asked to review, and in a denied step's error", (p) => (
          <textarea {...p} rows={2} value={draft.reason} onChange={(e) => set("reason", e.target.value)} />
        ))}
      </fieldset>

      <fieldset>
        <legend>Scope</legend>
        <p className="muted">Both empty: the whole workspace. The most specific scope wins, then the order.</p>
        <div className="rule-form__grid">
          {field("scope.workflow_id", "Only in workflow", null, (p) => (
            <select {...p} value={draft.scopeWorkflow} onChange={(e) => set("scopeWorkflow", e.target.value)}>
              <option value="">Any workflow</option>
              {workflows.map((w) => (
                <option key={w.workflow_id} value={w.workflow_id}>
                  {w.name}
                </option>
              ))}
              {draft.scopeWorkflow && !workflows.some((w) => w.workflow_id === draft.scopeWorkflow) ? (
                <option value={draft.scopeWorkflow}>Workflow {draft.scopeWorkflow}</option>
              ) : null}
            </select>
          ))}
          {field("scope.user", "Only for executions started by", "an email; empty: anyone", (p) => (
            <input {...p} type="text" value={draft.scopeUser} onChange={(e) => set("scopeUser", e.target.value)} />
          ))}
        </div>
      </fieldset>

      <fieldset>
        <legend>Match</legend>
        <p className="muted">Every key is optional; all those given must hold. Lists are separated by commas.</p>
        <div className="rule-form__grid">
          {field("match.tool", "Tool", "a glob: sql.*, file.write, *.query", (p) => (
            <input {...p} type="text" className="mono" value={draft.tool} onChange={(e) => set("tool", e.target.value)} />
          ))}
          {field("match.step_type", "Step type", STEP_TYPES.join(", "), (p) => (
            <input {...p} type="text" value={draft.stepType} onChange={(e) => set("stepType", e.target.value)} />
          ))}
          {field("match.workflow_id", "Workflow ids", null, (p) => (
            <input {...p} type="text" className="mono" value={draft.workflowId} onChange={(e) => set("workflowId", e.target.value)} />
          ))}
          {field("match.user", "Started by", "emails", (p) => (
            <input {...p} type="text" value={draft.user} onChange={(e) => set("user", e.target.value)} />
          ))}
          {field("match.agent_step", "Agent step", "an agent step id, or * for any", (p) => (
            <input {...p} type="text" className="mono" value={draft.agentStep} onChange={(e) => set("agentStep", e.target.value)} />
          ))}
          {field("match.agent", "Gateway agent", "agent names (MCP gateway), or * for any", (p) => (
            <input {...p} type="text" className="mono" value={draft.agent} onChange={(e) => set("agent", e.target.value)} />
          ))}
          {field("match.sql", "SQL", "reads the call's query param", (p) => (
            <select {...p} value={draft.sql} onChange={(e) => set("sql", e.target.value)}>
              <option value="">(no SQL check)</option>
              <option value="not_read">not a read-only statement (not_read)</option>
              <option value="read">a read-only statement (read)</option>
            </select>
          ))}
          {field("match.host_not_in", "URL host not in", "reads the url param: api.example.com, *.corp", (p) => (
            <input {...p} type="text" className="mono" value={draft.hostNotIn} onChange={(e) => set("hostNotIn", e.target.value)} />
          ))}
          {field("match.path_outside", "Path outside", "reads the path param: a folder such as summaries/", (p) => (
            <input {...p} type="text" className="mono" value={draft.pathOutside} onChange={(e) => set("pathOutside", e.target.value)} />
          ))}
        </div>
        <div className="field">
          <fieldset className="rule-form__risks" aria-describedby={shown["match.risk"] ? `${id}-match.risk-error` : undefined}>
            <legend>Tool risk</legend>
            {RISKS.map((r) => (
              <label key={r} className="rule-form__risk">
                <input
                  type="checkbox"
                  checked={draft.risk.includes(r)}
                  onChange={(e) => set("risk", e.target.checked ? [...draft.risk, r] : draft.risk.filter((x) => x !== r))}
                />{" "}
                {r}
              </label>
            ))}
            {shown["match.risk"] ? (
              <small id={`${id}-match.risk-error`} className="field-error" role="alert">
                ✕ Tool risk: {shown["match.risk"]}
              </small>
            ) : null}
          </fieldset>
        </div>
        {field(
          "match.params",
          "Params predicate",
          "an expression on the call: params.amount > 1000, params.method in ['POST', 'DELETE']",
          (p) => (
            <textarea {...p} rows={2} className="mono" value={draft.params} onChange={(e) => set("params", e.target.value)} />
          ),
        )}
      </fieldset>

      <RuleReplay workflows={workflows} scopeWorkflow={draft.scopeWorkflow} check={checkDraft}
        onRuleErrors={(errors) => {
          setReplayProblems(errors);
          const first = Object.keys(errors).map(FIELD_OF).find((f) => SHOWN_FIELDS.has(f));
          if (first) document.getElementById(`${id}-${first}`)?.focus();
        }} />

      {elsewhere.length > 0 ? (
        <div role="alert" className="notice notice--error">
          <p className="notice__title">The server refused the rule:</p>
          <ul className="error-list">
            {elsewhere.map(([f, m]) => (
              <li key={f}>
                <span className="mono">{f}</span>: {m}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {failure ? (
        <p role="alert" className="notice notice--error">
          Could not save the rule: {errorMessage(failure)}
        </p>
      ) : null}
      <div className="filters__actions">
        <button type="submit" className="button" aria-disabled={saving || undefined}>
          {saving ? "Saving…" : rule ? "Save the rule" : "Create the rule"}
        </button>
        <button type="button" className="button button--secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface FieldProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}
