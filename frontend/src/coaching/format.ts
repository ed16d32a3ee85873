/** Small display helpers shared by the queue and the panel. */

/** "45%" from a 0..1 rate. */
export function percent(rate: number | null | undefined): string {
  if (rate == null || !Number.isFinite(rate)) return "–";
  return `${Math.round(rate * 100)}%`;
}

/** Confidence as a number and a word, so it never rests on colour. */
export function confidenceLabel(confidence: number): string {
  const word = confidence >= 0.8 ? "high" : confidence >= 0.5 ? "medium" : "low";
  return `${percent(confidence)} (${word})`;
}

/** "just now", "3 min ago", "2 h ago", "4 days ago" from an ISO date. */
export function formatAge(iso: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (!Number.isFinite(then)) return "unknown age";
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** Pretty JSON; strings as they are. */
export function formatJson(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "(none)";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The pack id of a `correction_pack:<id>` source, else null. */
export function correctionPackId(source: string): string | null {
  const match = /^correction_pack:(.+)$/.exec(source);
  return match ? match[1] : null;
}
