import { useId, useState, type FormEvent, type ReactNode } from "react";
import { errorMessage } from "../api/client";
import { effectLabel } from "../approvals/PolicyVerdictView";
import type { PolicyEffect } from "../approvals/types";
import type { WorkflowMetrics } from "../api/metrics";
import { serverFieldErrors } from "./fieldErrors";
import { EFFECTS, RISKS, STEP_TYPES, type OneOrMany, type PolicyMatch, type PolicyRule, type PolicyRuleIn } from "./types";

/** The form's text for a string-or-list field: "a, b". */
const listText = (value: OneOrMany | null | undefined) => (Array.isArray(value) ? value.join(", ") : value ?? "");

/** "a, b" → ["a", "b"]; one item → "a"; nothing → undefined (the key is left out). */
function fromListText(text: string, alwaysList = false): OneOrMany | undefined {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) return undefined;
  return items.length === 1 && !alwaysList ? items[0] : items;
}

const asList = (value: OneOrMany | null | undefined): string[] =>
  value == null ? [] : Array.isArray(value) ? value : [value];

interface Draft {
  name: string;
  effect: PolicyEffect;
  reason: string;
  order: string;
  enabled: boolean;
  scopeWorkflow: string;
  scopeUser: string;
  tool: string;
  stepType: string;
  risk: string[];
  workflowId: string;
  user: string;
  agentStep: string;
  agent: string;
  sql: string;
  hostNotIn: string;
  pathOutside: string;
  params: string;
}

function toDraft(rule: PolicyRule | null): Draft {
  const m: PolicyMatch = rule?.match ?? {};
  return {
    name: rule?.name ?? "",
    effect: rule?.effect ?? "require_review",
    reason: rule?.reason ?? "",
    order: String(rule?.order ?? 10),
    enabled: rule?.enabled ?? true,
    scopeWorkflow: rule?.scope?.workflow_id ?? "",
    scopeUser: rule?.scope?.user ?? "",
    tool: listText(m.tool),
    stepType: listText(m.step_type),
    risk: asList(m.risk),
    workflowId: listText(m.workflow_id),
    user: listText(m.user),
    agentStep: listText(m.agent_step),
    agent: listText(m.agent),
    sql: m.sql ?? "",
    hostNotIn: listText(m.host_not_in),
    pathOutside: m.path_outside ?? "",
    params: m.params ?? "",
  };
}

/** The draft as the body the server takes, or what is wrong with it before sending. */
export function draftToRule(d: Draft): { rule?: PolicyRuleIn; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  if (!d.name.trim()) problems.name = "Give the rule a name.";
  const order = Number(d.order);
  if (d.order.trim() === "" || !Number.isInteger(order)) problems.order = "must be a whole number";
  const match: PolicyMatch = {};
  const put = <K extends keyof PolicyMatch>(key: K, value: PolicyMatch[K] | undefined) => {
    if (value !== undefined && value !== "") match[key] = value;
  };
  put("tool", fromListText(d.tool));
  put("step_type", fromListText(d.stepType));
  if (d.risk.length) match.risk = d.risk;
  put("workflow_id", fromListText(d.workflowId));
  put("user", fromListText(d.user));
  put("agent_step", fromListText(d.agentStep));
  put("agent", fromListText(d.agent));
  put("sql", d.sql || undefined);
  put("host_not_in", fromListText(d.hostNotIn, true) as string[] | undefined);
  put("path_outside", d.pathOutside.trim() || undefined);
  put("params", d.params.trim() || undefined);
  if (Object.keys(problems).length) return { problems };
  return {
    problems,
    rule: {
      name: d.name.trim(),
      effect: d.effect,
      reason: d.reason.trim(),
      order,
      enabled: d.enabled,
      scope: { workflow_id: d.scopeWorkflow || null, user: d.scopeUser.trim() || null },
      match,
    },
  };
}

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
  const server = serverFieldErrors(error);
  const shown: Record<string, string> = { ...problems };
  const elsewhere: [string, string][] = [];
  for (const [field, message] of Object.entries(server)) {
    const key = FIELD_OF(field);
    if (SHOWN_FIELDS.has(key)) shown[key] = shown[key] ? `${shown[key]} ${message}` : message;
    else elsewhere.push([field, message]);
  }
  const failure = error && Object.keys(server).length === 0 ? error : null;
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (saving) return;
    const checked = draftToRule(draft);
    setProblems(checked.problems);
    if (checked.rule) onSubmit(checked.rule);
    else document.getElementById(`${id}-${Object.keys(checked.problems)[0]}`)?.focus();
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
