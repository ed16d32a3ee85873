/** A policy rule as the rule form edits it (RuleForm.tsx): its fields as text, to and from the API's rule. */
import type { PolicyEffect } from "../approvals/types";
import type { OneOrMany, PolicyFallback, PolicyMatch, PolicyRule, PolicyRuleIn } from "./types";

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

export interface Draft {
  name: string;
  effect: PolicyEffect;
  fallback: PolicyFallback;
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

export function toDraft(rule: PolicyRule | null): Draft {
  const m: PolicyMatch = rule?.match ?? {};
  return {
    name: rule?.name ?? "",
    effect: rule?.effect ?? "require_review",
    fallback: rule?.fallback ?? "require_review",
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
      ...(d.effect === "confirm" ? { fallback: d.fallback } : {}),
      reason: d.reason.trim(),
      order,
      enabled: d.enabled,
      scope: { workflow_id: d.scopeWorkflow || null, user: d.scopeUser.trim() || null },
      match,
    },
  };
}
