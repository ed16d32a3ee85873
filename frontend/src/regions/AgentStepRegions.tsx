/**
 * The regions of an agent step's tools, for leads (docs/autonomy.md#regions-at-work): an agent step's calls of one
 * tool are the step scope `<agent step>:<tool>`, with their own regions, evidence and modes. The lead chooses one of
 * the step's tools (its `tools` names, its globs matched against the registered tools, and any tool it has called)
 * and works on that tool's regions with the same section as a tool step's (RegionsSection). One tool at a time: a
 * glob such as `sql.*` may allow many, and each section reads its regions, proposals and replays.
 */
import { useId, useState } from "react";
import { useTools } from "../tools/queries";
import { formatCount } from "../format";
import { RegionsSection } from "./RegionsSection";

const GLOB = /[*?[]/;

/** fnmatch's case-sensitive match (core/agent/spec.py resolve_tools): `*`, `?`, `[abc]`, `[!abc]`. */
export function globMatch(pattern: string, name: string): boolean {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s").test(name);
}

/**
 * The tools an agent step may call, in the order its `tools` lists them (a glob's matches in the registry's order),
 * then the tools it called that are no longer listed (`called`): each once.
 */
export function agentStepTools(patterns: unknown, registered: string[], called: string[]): string[] {
  const out: string[] = [];
  const add = (name: string) => {
    if (!out.includes(name)) out.push(name);
  };
  for (const p of Array.isArray(patterns) ? patterns : []) {
    if (typeof p !== "string" || !p) continue;
    if (GLOB.test(p)) registered.filter((n) => globMatch(p, n)).forEach(add);
    else add(p);
  }
  called.forEach(add);
  return out;
}

export function AgentStepRegions({
  workflowId,
  stepId,
  patterns,
  decisions,
}: {
  workflowId: string;
  stepId: string;
  /** The step's `tools` as written (names or globs). */
  patterns: unknown;
  /** Decisions counted per tool the step called (the metrics' `<step>:<tool>` scopes). */
  decisions: Record<string, number>;
}) {
  const id = useId();
  const registry = useTools();
  const tools = agentStepTools(patterns, (registry.data?.items ?? []).map((t) => t.name), Object.keys(decisions));
  const [chosen, setChosen] = useState<string | null>(null);
  // the lead's choice, else the tool with the most decisions (where regions matter most), else the first listed
  const busiest = [...tools].sort((a, b) => (decisions[b] ?? 0) - (decisions[a] ?? 0))[0];
  const tool = chosen !== null && tools.includes(chosen) ? chosen : busiest;
  return (
    <section className="regions regions--agent" aria-labelledby={`${id}-title`} data-agent-step={stepId}>
      <h3 id={`${id}-title`}>Regions of agent step {stepId}</h3>
      <p className="muted">
        The agent's calls of each tool have their own regions, evidence and modes (<code>{stepId}:&lt;tool&gt;</code>):
        a call in an AUTO region runs without asking while the tool's other calls are still reviewed.
      </p>
      {registry.isPending && GLOB.test(JSON.stringify(patterns ?? "")) ? (
        <p className="muted">Reading the registered tools its globs allow…</p>
      ) : null}
      {tools.length ? (
        <>
          <div className="field regions__tool">
            <label htmlFor={`${id}-tool`}>Tool</label>
            <select id={`${id}-tool`} value={tool} onChange={(e) => setChosen(e.target.value)}>
              {tools.map((t) => (
                <option key={t} value={t}>
                  {t}
                  {decisions[t] ? ` (${formatCount(decisions[t])} decided)` : ""}
                </option>
              ))}
            </select>
          </div>
          <RegionsSection key={tool} scope={{ kind: "step", workflowId, stepId: `${stepId}:${tool}` }} level={4} />
        </>
      ) : registry.isPending ? null : (
        <p className="empty">This agent step allows no registered tool: its calls have no regions to set.</p>
      )}
    </section>
  );
}
