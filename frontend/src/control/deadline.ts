/** Deadlines on human gates (a pending suggestion's `deadline`, an execution gate's): the time left, as words. */
import { useEffect, useState } from "react";

/** What a deadline does when it passes (`on_timeout`), as the operator reads it. */
const ACTION_WORDS: Record<string, string> = {
  skip: "skip",
  fail: "fail",
  accept: "accept",
  answer: "the default answer",
  reject: "reject",
  approve: "approve",
};

export const timeoutActionLabel = (action: string | null | undefined) =>
  action ? ACTION_WORDS[action] ?? action.replace(/_/g, " ") : "";

/** Seconds as m:ss, or h:mm:ss from an hour up. */
export function formatClock(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** Seconds left until `deadline` (ISO) at `now`; null when there is no (readable) deadline. */
export function secondsLeft(deadline: string | null | undefined, now: number): number | null {
  if (!deadline) return null;
  const at = Date.parse(deadline);
  return Number.isNaN(at) ? null : (at - now) / 1000;
}

/** The time now, re-read every `intervalMs` while `active`. */
export function useNow(active: boolean, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}
