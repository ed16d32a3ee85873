/** How the app spells numbers, rates, durations, times and values: one place for each, for both the operator and the lead side. */

/** 0.8571 → "85.7%" (with `decimals` 0: "86%"); whole percentages lose the decimal ("100%"). */
export function formatRate(rate: number | null | undefined, decimals = 1): string {
  if (rate == null || !Number.isFinite(rate)) return "—";
  const scale = 10 ** decimals;
  const percent = Math.round(rate * (100 * scale)) / scale;
  return `${Number.isInteger(percent) ? percent.toFixed(0) : percent.toFixed(decimals)}%`;
}

/** Confidence as a whole percentage and a word, so it never rests on colour: "62% (medium)". */
export function confidenceLabel(confidence: number): string {
  const word = confidence >= 0.8 ? "high" : confidence >= 0.5 ? "medium" : "low";
  return `${formatRate(confidence, 0)} (${word})`;
}

/** Milliseconds, as a person reads them: "850 ms", "2.1 s", "3 min 5 s". */
export function formatMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** "p50 850 ms · p90 2.1 s", or "—" before any decision. */
export function formatLatency(latency: { p50: number | null; p90: number | null } | undefined): string {
  if (!latency || (latency.p50 == null && latency.p90 == null)) return "—";
  return `median ${formatMs(latency.p50)} · p90 ${formatMs(latency.p90)}`;
}

/** "850 ms / 2.1 s" (median / p90) for tables whose header names the two. */
export function formatLatencyPair(latency: { p50: number | null; p90: number | null } | undefined): string {
  if (!latency || (latency.p50 == null && latency.p90 == null)) return "—";
  return `${formatMs(latency.p50)} / ${formatMs(latency.p90)}`;
}

export function formatCount(n: number | null | undefined): string {
  return n == null || !Number.isFinite(n) ? "—" : n.toLocaleString("en");
}

/** An ISO instant in the reader's locale and time zone, to the second. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
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

/** A chart bucket's hour: "22 Nov, 14:00". */
export function formatBucket(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** The JSON marker of an absent field in a correction pack (core/coaching/corrections.py). */
export function isMissingMarker(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 1 && value["$missing"] === true;
}

/** A before/after value: strings quoted as JSON, an absent field as "(absent)". */
export function formatPackValue(value: unknown): string {
  if (isMissingMarker(value)) return "(absent)";
  return JSON.stringify(value) ?? String(value);
}

/** Pretty JSON, strings quoted too: definition params, audit before/after. */
export function formatJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Pretty JSON for display, but strings as they are and a missing value as "(none)": outputs, params, errors. */
export function formatValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "(none)";
  return formatJson(value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The pack id of a suggestion's `correction_pack:<id>` source, else null. */
export function correctionPackId(source: string): string | null {
  const match = /^correction_pack:(.+)$/.exec(source);
  return match ? match[1] : null;
}

/** "28 accepted · 1 corrected · 1 rejected · 0 manual · 1 skipped". */
export function decisionBreakdown(s: {
  accepted: number;
  corrected: number;
  rejected: number;
  manual: number;
  skipped: number;
}): string {
  return [
    `${formatCount(s.accepted)} accepted`,
    `${formatCount(s.corrected)} corrected`,
    `${formatCount(s.rejected)} rejected`,
    `${formatCount(s.manual)} manual`,
    `${formatCount(s.skipped)} skipped`,
  ].join(" · ");
}

/** "1 decision", "3 decisions". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A long hex id shortened for tables ("5c8a10a1…"); short ids stay whole. */
export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** An ISO instant as the value of a `datetime-local` input, in the reader's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A `datetime-local` value (the reader's time zone) as an ISO instant in UTC, or null. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
