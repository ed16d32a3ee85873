import type { LevelChangedEvent } from "../api/metrics";
import type { components } from "../api/schema";
import type { PackChangedEvent } from "../dashboards/types";

type Notice = components["schemas"]["Notice"];
export type NoticeKind = Notice["kind"];

/**
 * A notice as the dashboard holds it: a demotion or a learned-rule change, read back (`GET /api/notices`) or pushed.
 * `id` is the seq of its audit event, the same either way (a pushed event's `audit_seq`). A pushed notice is built
 * from its event (describe.ts): `at` is when it arrived, and it has no `workflow_name` and, where its event has none,
 * no actor, step or reason.
 */
export type DashboardNotice = Omit<Notice, "actor" | "step_id" | "reason"> &
  Partial<Pick<Notice, "actor" | "step_id" | "reason">>;

/** The pushed events, with the seq of the audit event each one was recorded as. */
export type LevelEventWithSeq = LevelChangedEvent & { audit_seq?: number };
export type PackEventWithSeq = PackChangedEvent & { audit_seq?: number };
