import { useCallback, useEffect, useRef } from "react";

/** How long a burst of pushes must have been quiet before the page reads the server again. */
export const COALESCE_QUIET_MS = 250;
/** However long a burst goes on (a busy workspace pushes many events a second), read again by then. */
export const COALESCE_MAX_WAIT_MS = 1_000;

/** A burst of calls under way: the planned call, and when the burst began. */
export type Burst = { timer?: ReturnType<typeof setTimeout>; first?: number };

/**
 * Plans `fn` (replacing the call planned before) for when `burst` has been quiet for `quietMs`, and at the latest
 * `maxWaitMs` after the burst's first call; the burst is over once `fn` runs.
 */
export function planAfterBurst(burst: Burst, fn: () => void, quietMs: number, maxWaitMs: number): void {
  const now = Date.now();
  clearTimeout(burst.timer);
  burst.first ??= now;
  burst.timer = setTimeout(() => {
    burst.timer = burst.first = undefined;
    fn();
  }, Math.max(0, Math.min(quietMs, burst.first + maxWaitMs - now)));
}

/**
 * Pushes come in bursts: one decision brings its `execution_update`s and the next `coaching_suggestion`, and a busy
 * workspace brings many decisions a second, to every open page at once. A page that read the server again on each
 * push would read it dozens of times a second per tab. The function returned here calls `fn` once a burst has been
 * quiet for `quietMs`, and at least every `maxWaitMs` while it goes on; nothing is called after the page unmounts.
 */
export function useCoalesced(
  fn: () => void,
  quietMs: number = COALESCE_QUIET_MS,
  maxWaitMs: number = COALESCE_MAX_WAIT_MS,
): () => void {
  const latest = useRef(fn);
  useEffect(() => {
    latest.current = fn;
  });
  const burst = useRef<Burst>({});
  useEffect(() => () => clearTimeout(burst.current.timer), []);
  return useCallback(() => planAfterBurst(burst.current, () => latest.current(), quietMs, maxWaitMs), [quietMs, maxWaitMs]);
}
