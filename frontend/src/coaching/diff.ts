import { isPlainObject } from "../format";

export type DiffKind = "added" | "removed" | "changed";

export interface DiffEntry {
  /** Dotted path of the field, e.g. `headers.Accept`. */
  path: string;
  kind: DiffKind;
  before?: unknown;
  after?: unknown;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The field-by-field changes from `before` to `after`: objects are compared
 * key by key (nested keys get dotted paths); anything else, arrays included,
 * as one value.
 */
export function diffParams(before: unknown, after: unknown, prefix = ""): DiffEntry[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const entries: DiffEntry[] = [];
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      const path = prefix ? `${prefix}.${key}` : key;
      const inBefore = Object.prototype.hasOwnProperty.call(before, key) && before[key] !== undefined;
      const inAfter = Object.prototype.hasOwnProperty.call(after, key) && after[key] !== undefined;
      if (inBefore && !inAfter) entries.push({ path, kind: "removed", before: before[key] });
      else if (!inBefore && inAfter) entries.push({ path, kind: "added", after: after[key] });
      else if (inBefore && inAfter) entries.push(...diffParams(before[key], after[key], path));
    }
    return entries;
  }
  if (same(before, after)) return [];
  return [{ path: prefix || "(all params)", kind: "changed", before, after }];
}
