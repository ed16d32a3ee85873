/**
 * Risky keys are confirmed (issue #31 item 4): accepting or skipping a call whose tool's risk is `external` or
 * `destructive`, or that the policy flagged (its verdict is not `allow`), and approving anything in the queue, take
 * two keys: the decision key arms it ("Press Enter to accept …"), Enter within CONFIRM_WINDOW_MS sends it,
 * Escape (or any other decision, or the suggestion changing) cancels it. Read and write calls that nothing flagged
 * stay one key. Enter is not a character key, so it confirms under every shortcut mode (alone, Alt, off).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { PolicyVerdict } from "../approvals/types";
import type { DecisionKind } from "./types";

export const CONFIRM_WINDOW_MS = 5_000;
export const CONFIRM_KEY = "Enter";

const RISKY = new Set(["external", "destructive"]);
/** The decisions that act on a call at once (reject, correct and manual ask in a dialog first). */
const AT_ONCE: ReadonlySet<DecisionKind> = new Set(["accept", "skip"]);

/** What a call's risk is judged on: the tool's risk class and the policy's verdict. */
export interface RiskyCall {
  tool?: string | null;
  params?: unknown;
  risk?: string | null;
  policy?: PolicyVerdict | null;
}

/** Why a decision on `call` must be confirmed ("destructive", "flagged by the policy …"), or null when it need not. */
export function riskReason(call: RiskyCall | null | undefined): string | null {
  if (!call) return null;
  const risk = call.risk ?? call.policy?.risk ?? null;
  const flagged = call.policy && call.policy.effect !== "allow";
  if (flagged && call.policy?.default) {
    // no rule matched: the workspace's default for the risk flagged it (destructive calls need review by default)
    return risk && RISKY.has(risk) ? risk : "flagged by the workspace's default policy";
  }
  if (flagged) {
    const rule = call.policy?.rule?.name;
    const what = rule ? `flagged by the policy "${rule}"` : "flagged by the policy";
    return risk && RISKY.has(risk) ? `${risk}, ${what}` : what;
  }
  if (risk && RISKY.has(risk)) return risk;
  return null;
}

/** True when `kind` on `call` takes a confirming key. */
export function needsConfirmation(kind: DecisionKind, call: RiskyCall | null | undefined): boolean {
  return AT_ONCE.has(kind) && riskReason(call) !== null;
}

/** The first number named like an amount in the params (top level or one object down), or null. */
function amountOf(params: unknown, depth = 0): number | null {
  if (!params || typeof params !== "object" || Array.isArray(params) || depth > 1) return null;
  const entries = Object.entries(params as Record<string, unknown>);
  for (const [key, value] of entries) {
    if (/^(amount|total|sum|value|price)$/i.test(key) && typeof value === "number") return value;
  }
  for (const [, value] of entries) {
    const found = amountOf(value, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** What the confirming prompt says: "Press Enter to accept Pay the supplier (http.request, amount 1,840; external)". */
export function confirmPrompt(verb: string, name: string, call: RiskyCall): string {
  const amount = amountOf(call.params);
  const facts = [call.tool, amount !== null ? `amount ${amount.toLocaleString("en-US")}` : null].filter(Boolean);
  const detail = facts.length ? ` (${facts.join(", ")}; ${riskReason(call)})` : ` (${riskReason(call)})`;
  return `Press ${CONFIRM_KEY} to ${verb} ${name}${detail}.`;
}

/**
 * What approving an approval says. Every approval takes the confirming key: each is a checkpoint someone asked for
 * (a sign-off step of the workflow, a call the policy held for review, a plan to run), like "Pay 1840.0 to Acme
 * Paper Ltd for INV-7731?".
 */
export function approvalPrompt(approval: RiskyCall & { message?: string | null }): string {
  const what = (approval.message || "this approval").replace(/[?.]\s*$/, "");
  const amount = amountOf(approval.params);
  const reason = riskReason(approval);
  const facts = [approval.tool, amount !== null ? `amount ${amount.toLocaleString("en-US")}` : null, reason]
    .filter(Boolean)
    .join(", ");
  return `Press ${CONFIRM_KEY} to approve: ${what}${facts ? ` (${facts})` : ""}.`;
}

/** A decision waiting for its confirming key: which action on which item, and what the prompt says. */
export interface Armed<K extends string> {
  action: K;
  target: string;
  prompt: string;
}

/**
 * The armed decision, at most one, dropped after `windowMs`. `arm` starts (or restarts) the window; `take` returns
 * and clears the armed decision if it is still the one for `target` (null otherwise); `cancel` drops it.
 */
export function useConfirmation<K extends string>(windowMs = CONFIRM_WINDOW_MS) {
  const [armed, setArmed] = useState<Armed<K> | null>(null);
  const current = useRef<Armed<K> | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const set = useCallback((next: Armed<K> | null) => {
    current.current = next;
    setArmed(next);
    clearTimeout(timer.current);
    if (next) timer.current = setTimeout(() => set(null), windowMs);
  }, [windowMs]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const arm = useCallback((next: Armed<K>) => set(next), [set]);
  const cancel = useCallback(() => {
    if (current.current) set(null);
  }, [set]);
  const take = useCallback(
    (target: string | null | undefined): Armed<K> | null => {
      const was = current.current;
      if (!was) return null;
      set(null);
      return was.target === target ? was : null;
    },
    [set],
  );
  return { armed, arm, cancel, take, isArmed: () => current.current !== null };
}
