/**
 * The rule form's replay (docs/autonomy.md "Proposals and replay"): before the rule is saved, what the workspace's
 * rules with it added would have done to the latest decided calls of a workflow (one step of it), a gateway tool, or
 * else the rule's scope: what would have been denied, run unattended or still been asked, and how reviewers decided
 * those. The rule's own 422 goes to its fields in the form (`onRuleErrors`); the rest shows here.
 */
import { useId, useState } from "react";
import { errorMessage } from "../api/client";
import type { WorkflowMetrics } from "../api/metrics";
import { ReplayTable } from "../regions/ReplayTable";
import { serverFieldErrors } from "./fieldErrors";
import { usePolicyReplay } from "./queries";
import type { PolicyRuleIn } from "./types";

export function RuleReplay({
  workflows,
  scopeWorkflow,
  check,
  onRuleErrors,
}: {
  workflows: readonly Pick<WorkflowMetrics, "workflow_id" | "name">[];
  /** The rule's scope's workflow (the default place to replay it). */
  scopeWorkflow: string;
  /** The rule as written, or null when the form found a problem (then shown on its field). */
  check: () => PolicyRuleIn | null;
  /** The server's problems with the rule itself, by the form's field name (`match.params`), or {} to clear them. */
  onRuleErrors: (errors: Record<string, string>) => void;
}) {
  const id = useId();
  const replay = usePolicyReplay();
  const [over, setOver] = useState<"scope" | "workflow" | "tool">("scope");
  const [workflow, setWorkflow] = useState("");
  const [step, setStep] = useState("");
  const [tool, setTool] = useState("");
  const [subject, setSubject] = useState("");
  const server = serverFieldErrors(replay.error);
  const own = Object.entries(server).filter(([k]) => !k.startsWith("rule."));
  const failure = replay.isError && Object.keys(server).length === 0 ? replay.error : null;

  const run = () => {
    const rule = check();
    if (!rule) return;
    onRuleErrors({});
    const where =
      over === "workflow" && workflow
        ? { workflow_id: workflow, step_id: step.trim() || null }
        : over === "tool" && tool.trim()
          ? { tool: tool.trim() }
          : {};
    setSubject(`the rule ${rule.name}`);
    replay.mutate(
      { rule, ...where },
      {
        onError: (error) => {
          const errors: Record<string, string> = {};
          for (const [k, v] of Object.entries(serverFieldErrors(error)))
            if (k.startsWith("rule.")) errors[k.slice(5)] = v;
          onRuleErrors(errors);
        },
      },
    );
  };

  const scopeName = workflows.find((w) => w.workflow_id === scopeWorkflow)?.name ?? scopeWorkflow;
  return (
    <fieldset className="rule-replay">
      <legend>Replay before saving</legend>
      <p className="muted">
        What the workspace's rules, with this one added, would have done to the latest decided calls. Nothing is
        stored.
      </p>
      <div className="rule-form__grid">
        <div className="field">
          <label htmlFor={`${id}-over`}>Replay over</label>
          <select id={`${id}-over`} value={over} onChange={(e) => setOver(e.target.value as typeof over)}>
            <option value="scope">{scopeWorkflow ? `Its scope's workflow (${scopeName})` : "The workspace's latest calls"}</option>
            <option value="workflow">A workflow (or one step of it)</option>
            <option value="tool">A gateway tool</option>
          </select>
        </div>
        {over === "workflow" ? (
          <>
            <div className="field">
              <label htmlFor={`${id}-workflow`}>Workflow</label>
              <select id={`${id}-workflow`} value={workflow} onChange={(e) => setWorkflow(e.target.value)}>
                <option value="">Choose one</option>
                {workflows.map((w) => (
                  <option key={w.workflow_id} value={w.workflow_id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor={`${id}-step`}>Step id</label>
              <input id={`${id}-step`} type="text" className="mono" value={step} aria-describedby={`${id}-step-hint`}
                onChange={(e) => setStep(e.target.value)} />
              <small id={`${id}-step-hint`} className="muted">
                empty: every step of the workflow
              </small>
            </div>
          </>
        ) : null}
        {over === "tool" ? (
          <div className="field">
            <label htmlFor={`${id}-tool`}>Gateway tool</label>
            <input id={`${id}-tool`} type="text" className="mono" value={tool} onChange={(e) => setTool(e.target.value)} />
          </div>
        ) : null}
      </div>
      <button type="button" className="button button--secondary" onClick={run} aria-disabled={replay.isPending || undefined}>
        {replay.isPending ? "Replaying…" : "Replay"}
      </button>
      <div aria-live="polite" className="rule-replay__result">
        {own.length ? (
          <div role="alert" className="notice notice--error">
            <p className="notice__title">Could not replay the rule:</p>
            <ul className="error-list">
              {own.map(([f, m]) => (
                <li key={f}>
                  <span className="mono">{f}</span>: {m}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {Object.keys(server).some((k) => k.startsWith("rule.")) ? (
          <p role="alert" className="notice notice--error">
            Not replayed: the server refused the rule (see its fields above).
          </p>
        ) : null}
        {failure ? (
          <p role="alert" className="notice notice--error">
            Not replayed: {errorMessage(failure)}
          </p>
        ) : null}
        {replay.data && !replay.isError ? <ReplayTable replay={replay.data} subject={subject} /> : null}
      </div>
    </fieldset>
  );
}
