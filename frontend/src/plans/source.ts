/** Reading what was pasted or uploaded into the new-plan form. */
import { isPlainObject } from "../format";
import type { PlanSource } from "./api";

/**
 * The body to send for `text` with `mode`: JSON (an object) is parsed here and
 * the mode set on it; anything else goes to the server as YAML (it parses YAML
 * as /api/workflows does), the mode appended as a last top-level key (YAML's
 * last key wins). Throws with a readable message for JSON that is not an object.
 */
export function planSource(text: string, mode: string): PlanSource {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`Not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (!isPlainObject(parsed)) throw new Error("A plan is an object: { \"steps\": [ … ] }.");
    return { json: { ...parsed, mode } };
  }
  const body = trimmed.replace(/\n(\.\.\.)\s*$/, "");
  return { yaml: `${body}\nmode: ${mode}\n` };
}

/** A 400/422's details as `[field path, message]` rows (`steps[0].tool`, `yaml`, `mode`…). */
export function detailRows(details: unknown): [string, string][] {
  if (!isPlainObject(details)) return [];
  const rows: [string, string][] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) rows.push([path, value.join(" ")]);
    else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    else if (value !== undefined && value !== null) rows.push([path, String(value)]);
  };
  walk(isPlainObject(details.json) ? details.json : details, "");
  return rows;
}
