/** Who may decide an approval, as the server judges it (core/approvals.check_eligible), for the queue to sort by. */
import type { Approval } from "./types";

const RANK: Record<string, number> = { operator: 0, lead: 1, admin: 2 };

export interface Decider {
  id: string | number | null;
  email: string | null;
  role: string | null;
}

/** Roles are a hierarchy: `lead` is met by a lead or an admin. */
export function satisfies(role: string | null, required: string): boolean {
  return (RANK[role ?? ""] ?? -1) >= (RANK[required] ?? Infinity);
}

/** Why `who` cannot decide `approval` now, or null when they can. The server has the last word (403/409). */
export function whyNotDecidable(approval: Approval, who: Decider): string | null {
  if (approval.status !== "pending") return `This approval is already ${approval.status}.`;
  const email = (who.email ?? "").toLowerCase();
  const id = who.id === null ? "" : String(who.id).toLowerCase();
  const mine = approval.decisions.find((d) => d.user.toLowerCase() === email && d.decision !== "expire");
  if (mine) return `You already decided (${mine.decision}); your first decision stands.`;
  if (approval.separate_duties && approval.started_by && id && String(approval.started_by).toLowerCase() === id) {
    return "Separation of duties: you started this execution, so someone else must approve it.";
  }
  const named = approval.approvers.users.map((u) => u.toLowerCase());
  if ((email && named.includes(email)) || (id && named.includes(id))) return null;
  if (approval.approvers.roles.some((r) => satisfies(who.role, r))) return null;
  const roles = approval.approvers.roles.join(" or ");
  return `It needs ${roles ? `the role ${roles}` : "one of the named users"}${roles && named.length ? " or one of the named users" : ""}; you are ${who.role ?? "not a member"}.`;
}

/** The people whose approval counts: approves and edits since the last edit (an edit changes what is approved). */
export function countedApprovers(approval: Approval): string[] {
  let counted: string[] = [];
  for (const d of approval.decisions) {
    if (d.decision === "edit") counted = [d.user];
    else if (d.decision === "approve" && !counted.includes(d.user)) counted.push(d.user);
  }
  return counted;
}

/** "1 of 2 approvals", from the server's count when it gives one. */
export function quorumText(approval: Approval): string {
  const got = approval.approvals ?? countedApprovers(approval).length;
  return `${got} of ${approval.quorum} ${approval.quorum === 1 ? "approval" : "approvals"}`;
}

export const KIND_LABEL: Record<string, string> = {
  step: "Approval step",
  tool_call: "Tool call review",
  plan: "Plan approval",
  gateway: "Agent call (MCP gateway)",
};

export const ON_TIMEOUT_TEXT: Record<string, string> = {
  approve: "it is approved",
  reject: "it is rejected",
  fail: "it expires and the execution fails",
};

/** How far off a deadline is: "in 5 min", "in 3 h", "in 2 days", or "passed". */
export function deadlineWords(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return "";
  if (at <= now) return "passed";
  const minutes = Math.round((at - now) / 60_000);
  if (minutes < 1) return "in under a minute";
  if (minutes < 120) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `in ${hours} h` : `in ${Math.round(hours / 24)} days`;
}

/** The queue's tag for an approval with a deadline: "due in 5 min" (not "deadline" beside its age, which read as
 * a deadline that came "just now"), or "deadline passed". */
export function deadlineTag(iso: string, now: number): string {
  const words = deadlineWords(iso, now);
  return words === "passed" ? "deadline passed" : words ? `due ${words}` : "deadline";
}
