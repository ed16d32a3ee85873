import type { LevelChangedEvent } from "../api/metrics";
import type { PackChangedEvent, RuleRef } from "../dashboards/types";

export type NoticeKind = "demotion" | "step_demotion" | "learned_rule_change" | "gateway_demotion";

/**
 * A notice of the dashboard: a demotion or a learned-rule change. `id` is the
 * seq of its audit event, the same whether the notice was pushed (the event's
 * `audit_seq`) or read back from `GET /api/notices`.
 */
export interface Notice {
  id: number;
  kind: NoticeKind;
  /** ISO 8601: when it happened (a pushed notice: when it arrived). */
  at: string;
  actor?: string;
  workflow_id: string | null;
  /** From the server; null when the workflow is gone (a pushed notice has none). */
  workflow_name?: string | null;
  step_id?: string | null;
  /** Why a demotion happened. */
  reason?: string | null;
  spot_check_rate?: number | null;
  /** gateway_demotion: the MCP gateway tool, and the agent whose calls of it were demoted (null: every agent) */
  tool?: string | null;
  agent?: string | null;
  pack_id?: string;
  cause?: string;
  started?: RuleRef[];
  stopped?: RuleRef[];
}

/** The pushed events, with the seq of the audit event each one was recorded as. */
export type LevelEventWithSeq = LevelChangedEvent & { audit_seq?: number };
export type PackEventWithSeq = PackChangedEvent & { audit_seq?: number };
