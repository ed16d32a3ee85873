/** Pushed events as notices, and notices in words (for the page, screen readers and browser notifications). */
import { formatPackValue } from "../format";
import type { GatewayToolChangedEvent } from "../tools/gatewayLearning";
import type { LevelEventWithSeq, DashboardNotice, PackEventWithSeq } from "./types";

/** A workflow or a step taken out of AUTO, by spot checks or by a lead. */
export function isDemotion(event: { previous_mode?: string | null; mode?: string | null }): boolean {
  return event.previous_mode === "auto" && event.mode === "coaching";
}

/** A demotion as a notice (null for any other level change, or one without its audit seq). */
export function noticeFromLevelEvent(event: LevelEventWithSeq, at = new Date().toISOString()): DashboardNotice | null {
  if (!isDemotion(event) || typeof event.audit_seq !== "number") return null;
  return {
    id: event.audit_seq,
    kind: event.step_id ? "step_demotion" : "demotion",
    at,
    workflow_id: event.workflow_id,
    step_id: event.step_id ?? null,
    reason: event.reason ?? null,
  };
}

/** A gateway tool (or a tool for one agent) taken out of AUTO, as a notice (null for any other change). */
export function noticeFromGatewayEvent(event: GatewayToolChangedEvent, at = new Date().toISOString()): DashboardNotice | null {
  if (!isDemotion(event) || typeof event.audit_seq !== "number") return null;
  return {
    id: event.audit_seq,
    kind: "gateway_demotion",
    at,
    workflow_id: null,
    tool: event.tool,
    agent: event.agent ?? null,
    reason: event.reason ?? null,
  };
}

/** A learned rule that started or stopped applying, as a notice. */
export function noticeFromPackEvent(event: PackEventWithSeq, at = new Date().toISOString()): DashboardNotice | null {
  if (typeof event.audit_seq !== "number") return null;
  return {
    id: event.audit_seq,
    kind: "learned_rule_change",
    at: event.rules_changed_at || at,
    workflow_id: event.workflow_id,
    step_id: event.step_id,
    pack_id: event.pack_id,
    cause: event.cause,
    started: event.started ?? [],
    stopped: event.stopped ?? [],
  };
}

/** The name to show for a notice's workflow. */
export function workflowNameOf(notice: DashboardNotice, names?: ReadonlyMap<string, string>): string {
  const id = notice.workflow_id ?? "";
  return notice.workflow_name || names?.get(id) || `Workflow ${id}`;
}

export function noticeTitle(notice: DashboardNotice, workflowName: string): string {
  if (notice.kind === "gateway_demotion") {
    const agent = notice.agent ? ` for agent “${notice.agent}”` : "";
    return `Gateway tool “${notice.tool ?? ""}”${agent} was demoted to coaching`;
  }
  const step = notice.step_id ? `Step “${notice.step_id}” of “${workflowName}”` : `“${workflowName}”`;
  if (notice.kind !== "learned_rule_change") return `${step} was demoted to coaching`;
  const started = notice.started?.length ?? 0;
  const stopped = notice.stopped?.length ?? 0;
  if (started && !stopped) return `A learned rule now applies to ${lowerFirst(step)}`;
  if (stopped && !started) return `A learned rule stopped applying to ${lowerFirst(step)}`;
  return `Learned rules changed for ${lowerFirst(step)}`;
}

const CAUSES: Record<string, string> = {
  correction: "after operators' corrections",
  enabled: "the pack was enabled",
  disabled: "the pack was disabled",
  import: "the pack was imported",
};

const rule = (r: NonNullable<DashboardNotice["started"]>[number]) => `${r.field}: ${formatPackValue(r.before)} → ${formatPackValue(r.after)}`;

/** The details: a demotion's reason, or which rules started and stopped applying and why. */
export function noticeBody(notice: DashboardNotice): string {
  if (notice.kind !== "learned_rule_change") {
    if (notice.reason) return `${upperFirst(notice.reason)}.`;
    return notice.kind === "gateway_demotion"
      ? "It is back in coaching: the agents' held calls are reviewed again."
      : "It is back in coaching: its suggestions are reviewed again.";
  }
  const parts: string[] = [];
  if (notice.started?.length) parts.push(`Now applies: ${notice.started.map(rule).join("; ")}.`);
  if (notice.stopped?.length) parts.push(`No longer applies: ${notice.stopped.map(rule).join("; ")}.`);
  const cause = notice.cause ? CAUSES[notice.cause] : undefined;
  if (cause) parts.push(`${upperFirst(cause)}.`);
  return parts.join(" ");
}

/** Title and body in one sentence, for a live region. */
export function noticeSentence(notice: DashboardNotice, workflowName: string): string {
  return `${noticeTitle(notice, workflowName)}. ${noticeBody(notice)}`;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lowerFirst(text: string): string {
  return text.startsWith("Step ") ? `step ${text.slice(5)}` : text;
}
