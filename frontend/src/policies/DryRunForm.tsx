import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import type { WorkflowMetrics } from "../api/metrics";
import { PolicyVerdictView } from "../approvals/PolicyVerdictView";
import { isPlainObject } from "../format";
import { serverFieldErrors } from "./fieldErrors";
import { useDryRun } from "./queries";
import { STEP_TYPES, isStepType, type StepType } from "./types";

/**
 * The dry run: a call (tool, params, step type, workflow, who started it, agent step) judged by the current rules,
 * with the explanation: the effect, the deciding rule and the rules that matched but lost, each with why.
 */
export function DryRunForm({ workflows }: { workflows: readonly Pick<WorkflowMetrics, "workflow_id" | "name">[] }) {
  const id = useId();
  const run = useDryRun();
  const [tool, setTool] = useState("");
  const [params, setParams] = useState("{}");
  const [stepType, setStepType] = useState<StepType>("action");
  const [workflow, setWorkflow] = useState("");
  const [user, setUser] = useState("");
  const [agentStep, setAgentStep] = useState("");
  const [problems, setProblems] = useState<Record<string, string>>({});
  const server = serverFieldErrors(run.error);
  const shown = { ...server, ...problems };
  const failure = run.error && Object.keys(server).length === 0 ? run.error : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (run.isPending) return;
    const found: Record<string, string> = {};
    if (!tool.trim()) found.tool = "Name the tool the call uses.";
    let parsed: unknown = {};
    try {
      parsed = params.trim() ? JSON.parse(params) : {};
      if (!isPlainObject(parsed)) found.params = "must be a JSON object ({…})";
    } catch (err) {
      found.params = `not valid JSON: ${err instanceof Error ? err.message : String(err)}`;
    }
    setProblems(found);
    if (Object.keys(found).length) return;
    run.mutate({
      tool: tool.trim(),
      params: parsed as Record<string, unknown>,
      step_type: stepType,
      workflow_id: workflow || null,
      user: user.trim() || null,
      agent_step: agentStep.trim() || null,
    });
  };

  const error = (name: string, label: string) =>
    shown[name] ? (
      <small id={`${id}-${name}-error`} className="field-error" role="alert">
        ✕ {label}: {shown[name]}
      </small>
    ) : null;
  const described = (name: string) => (shown[name] ? `${id}-${name}-error` : undefined);

  return (
    <section aria-labelledby={`${id}-title`} className="dry-run">
      <h2 id={`${id}-title`}>Dry run</h2>
      <p className="muted">Judge a call with the current rules, without running anything.</p>
      <form onSubmit={submit} noValidate aria-label="Dry run">
        <div className="rule-form__grid">
          <div className="field">
            <label htmlFor={`${id}-tool`}>Tool</label>
            <input id={`${id}-tool`} type="text" className="mono" value={tool} aria-invalid={shown.tool ? true : undefined}
              aria-describedby={described("tool")} onChange={(e) => setTool(e.target.value)} />
            {error("tool", "Tool")}
          </div>
          <div className="field">
            <label htmlFor={`${id}-step_type`}>Step type</label>
            <select id={`${id}-step_type`} value={stepType} aria-describedby={described("step_type")}
              onChange={(e) => isStepType(e.target.value) && setStepType(e.target.value)}>
              {STEP_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
            {error("step_type", "Step type")}
          </div>
          <div className="field">
            <label htmlFor={`${id}-workflow_id`}>Workflow</label>
            <select id={`${id}-workflow_id`} value={workflow} aria-describedby={described("workflow_id")}
              onChange={(e) => setWorkflow(e.target.value)}>
              <option value="">None</option>
              {workflows.map((w) => (
                <option key={w.workflow_id} value={w.workflow_id}>
                  {w.name}
                </option>
              ))}
            </select>
            {error("workflow_id", "Workflow")}
          </div>
          <div className="field">
            <label htmlFor={`${id}-user`}>Started by</label>
            <input id={`${id}-user`} type="text" value={user} aria-describedby={described("user")}
              onChange={(e) => setUser(e.target.value)} />
            {error("user", "Started by")}
          </div>
          <div className="field">
            <label htmlFor={`${id}-agent_step`}>Agent step</label>
            <input id={`${id}-agent_step`} type="text" className="mono" value={agentStep}
              aria-describedby={described("agent_step")} onChange={(e) => setAgentStep(e.target.value)} />
            {error("agent_step", "Agent step")}
          </div>
        </div>
        <div className="field">
          <label htmlFor={`${id}-params`}>Params (JSON)</label>
          <textarea id={`${id}-params`} className="mono" rows={4} value={params} spellCheck={false}
            aria-invalid={shown.params ? true : undefined} aria-describedby={described("params")}
            onChange={(e) => setParams(e.target.value)} />
          {error("params", "Params")}
        </div>
        {failure ? (
          <p role="alert" className="notice notice--error">
            The dry run failed: {errorMessage(failure)}
          </p>
        ) : null}
        <button type="submit" className="button" aria-disabled={run.isPending || undefined}>
          {run.isPending ? "Judging…" : "Judge this call"}
        </button>
      </form>
      <div aria-live="polite" className="dry-run__result">
        {run.data ? (
          <PolicyVerdictView verdict={run.data} explain headingLevel={3} title="Verdict" />
        ) : null}
      </div>
    </section>
  );
}
