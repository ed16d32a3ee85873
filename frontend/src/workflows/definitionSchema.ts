/**
 * The editor's help from the definition format's JSON Schema (`GET /api/workflows/schema`, made from the server's own
 * schemas): the fields and values to offer where the cursor is, and the problems the schema finds while one writes.
 * The server's check on save stays the judge (tools, templates and the references between steps are its own).
 *
 * A step is a `oneOf` of one schema per step type; the one that applies is the step's `type` (`action` when it has a
 * `tool` and no type), so a step's fields and problems are its type's.
 */
import { parseDocument } from "yaml";
import { validate } from "../coaching/jsonSchema";

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  default?: unknown;
  definitions?: Record<string, JsonSchema>;
}

export type Path = (string | number)[];

/** The schema served, or null when the answer is not one (the editor then works as it did without help). */
export function asDefinitionSchema(value: unknown): JsonSchema | null {
  if (value === null || typeof value !== "object") return null;
  const schema = value as JsonSchema;
  return schema.properties?.steps && schema.definitions ? schema : null;
}

function resolve(root: JsonSchema, schema: JsonSchema | undefined): JsonSchema | undefined {
  let current = schema;
  for (let hops = 0; current?.$ref && hops < 16; hops += 1) {
    current = root.definitions?.[current.$ref.replace("#/definitions/", "")];
  }
  return current;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The step types a step schema's `oneOf` offers, each with its schema. */
function stepTypes(root: JsonSchema, schema: JsonSchema): [string, JsonSchema][] {
  return (schema.oneOf ?? []).flatMap((option) => {
    const branch = resolve(root, option);
    const type = branch?.properties?.type?.enum?.[0];
    return branch && typeof type === "string" ? [[type, branch] as [string, JsonSchema]] : [];
  });
}

/** The branch of a `oneOf` that `value` says it is: its `type`, `action` with a tool or no type yet. */
function branchOf(root: JsonSchema, schema: JsonSchema, value: unknown): JsonSchema | undefined {
  const types = stepTypes(root, schema);
  const written = isObject(value) ? value.type : undefined;
  const type = typeof written === "string" ? written : "action";
  return types.find(([t]) => t === type)?.[1];
}

/** The schema of the value at `path` in `data` (an object's field, a list's item, a variable), or undefined. */
export function schemaAt(root: JsonSchema, data: unknown, path: Path): JsonSchema | undefined {
  let schema = resolve(root, root);
  let value = data;
  for (const part of path) {
    if (!schema) return undefined;
    if (schema.oneOf) schema = branchOf(root, schema, value);
    if (!schema) return undefined;
    if (typeof part === "number") schema = resolve(root, schema.items);
    else if (schema.properties?.[part]) schema = resolve(root, schema.properties[part]);
    else if (typeof schema.additionalProperties === "object") {
      const declared = schema.additionalProperties.anyOf?.find((s) => s.$ref) ?? schema.additionalProperties;
      schema = resolve(root, declared);
    } else return undefined;
    value = isObject(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[part] : undefined;
  }
  if (schema?.oneOf) return branchOf(root, schema, value) ?? schema;
  return schema;
}

export interface Offer {
  label: string;
  detail?: string;
  info?: string;
}

/** The fields the object at `path` may take and does not have yet. */
export function fieldsAt(root: JsonSchema, data: unknown, path: Path, written: readonly string[]): Offer[] {
  const schema = schemaAt(root, data, path);
  if (!schema?.properties) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties)
    .filter(([name]) => !written.includes(name))
    .map(([name, field]) => {
      const resolved = resolve(root, field);
      return {
        label: name,
        detail: required.has(name) ? "required" : undefined,
        info: resolved?.description ?? field.description,
      };
    });
}

/** The values a field takes when they are a fixed set (a step's type: every step type, each with its description). */
export function valuesAt(root: JsonSchema, data: unknown, path: Path): Offer[] {
  const field = path[path.length - 1];
  const parent = path.slice(0, -1);
  if (field === "type") {
    const owner = parentSchema(root, data, parent);
    if (owner?.oneOf) return stepTypes(root, owner).map(([type, branch]) => ({ label: type, info: branch.description }));
  }
  const schema = schemaAt(root, data, path);
  return (schema?.enum ?? []).filter((v) => v !== null).map((v) => ({ label: String(v) }));
}

/** The schema of the list item or field at `path` before its `oneOf` is resolved. */
function parentSchema(root: JsonSchema, data: unknown, path: Path): JsonSchema | undefined {
  if (path.length === 0) return resolve(root, root);
  const last = path[path.length - 1];
  const owner = schemaAt(root, data, path.slice(0, -1));
  if (!owner) return undefined;
  return resolve(root, typeof last === "number" ? owner.items : owner.properties?.[last]);
}

export interface SchemaProblem {
  path: Path;
  message: string;
}

/** What the schema finds wrong in `data`: each step against its own type's schema, the rest against the root. */
export function schemaProblems(root: JsonSchema, data: unknown): SchemaProblem[] {
  if (!isObject(data)) return [];
  const stepsSchema = resolve(root, root.properties?.steps?.items);
  const steps = Array.isArray(data.steps) ? data.steps : null;
  const problems: SchemaProblem[] = [];
  const { steps: _steps, ...rest } = data;
  const top: JsonSchema = { ...root, properties: { ...root.properties, steps: { type: "array" } } };
  for (const p of validate(top as never, steps ? { ...rest, steps } : data, root as never)) {
    problems.push({ path: pathOf(p.path), message: p.message });
  }
  if (!steps || !stepsSchema?.oneOf) return problems;
  const known = stepTypes(root, stepsSchema).map(([t]) => t);
  steps.forEach((step, index) => {
    if (!isObject(step)) {
      problems.push({ path: ["steps", index], message: "must be an object" });
      return;
    }
    const branch = branchOf(root, stepsSchema, step);
    if (!branch) {
      problems.push({ path: ["steps", index, "type"], message: `unknown step type; one of ${known.join(", ")}` });
      return;
    }
    for (const p of validate(branch as never, step, root as never)) {
      problems.push({ path: ["steps", index, ...pathOf(p.path)], message: p.message });
    }
  });
  return problems;
}

const pathOf = (dotted: string): Path => (dotted ? dotted.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p)) : []);

/** `["steps", 2, "quorum"]` as the server writes it: `steps[2].quorum`. */
export function pathText(path: Path): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

export interface PlacedProblem {
  from: number;
  to: number;
  message: string;
}

/**
 * The schema's problems of a definition's text, each at the text of the value it is about (a missing field: at
 * its object). Nothing while the text cannot be read: the server says where it breaks.
 */
export function textProblems(root: JsonSchema, text: string): PlacedProblem[] {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) return [];
  const problems = schemaProblems(root, doc.toJS());
  return problems.map(({ path, message }) => {
    let at: Path = path;
    let node = doc.getIn(at, true) as { range?: [number, number, number] } | undefined;
    while (!node?.range && at.length > 0) {
      at = at.slice(0, -1);
      node = (at.length ? doc.getIn(at, true) : doc.contents) as { range?: [number, number, number] } | undefined;
    }
    const [from, end] = node?.range ?? [0, 0];
    // a missing field is marked on the first line of its object, not all of it
    const lineEnd = text.indexOf("\n", from);
    const to = at.length < path.length && lineEnd >= 0 ? Math.min(end, lineEnd) : end;
    return { from, to: Math.max(to, from), message: `${pathText(path)}: ${message}` };
  });
}

interface YamlLine {
  dash: number | null; // the column of a "- " that starts a list item
  column: number; // where the line's content (a key) starts
  key: string | null;
}

function yamlLine(line: string): YamlLine | null {
  if (!line.trim() || line.trim().startsWith("#")) return null;
  const m = /^(\s*)(-\s+)?(?:([A-Za-z_][\w-]*)\s*:(?:\s|$))?/.exec(line) as RegExpExecArray;
  const dash = m[2] ? m[1].length : null;
  return { dash, column: m[1].length + (m[2]?.length ?? 0), key: m[3] ?? null };
}

/**
 * Where the cursor is in a YAML definition, read from the indentation of the lines above it (the text being typed
 * is rarely valid YAML): the path of the mapping its line belongs to, the key whose value is being typed (if any),
 * the word typed so far, and the keys that mapping has already.
 */
export function yamlContext(
  text: string,
  pos: number,
): { path: Path; key?: string; prefix: string; from: number; written: string[] } | null {
  const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
  const before = text.slice(lineStart, pos);
  const valueMatch = /^(\s*)(-\s+)?([A-Za-z_][\w-]*):\s+([\w.-]*)$/.exec(before);
  const keyMatch = /^(\s*)(-\s+)?([A-Za-z_][\w-]*)?$/.exec(before);
  const match = valueMatch ?? keyMatch;
  if (!match) return null;
  const column = match[1].length + (match[2]?.length ?? 0);
  const path: Path = [];
  const written: string[] = [];
  let seek = column;
  let mode: "map" | "list" = "map";
  let collecting = true;
  let items = 0; // the items above the cursor's, in the list it is in: its index
  if (match[2]) {
    path.unshift(0);
    seek = match[1].length;
    mode = "list";
    collecting = false;
  }
  const lines = text.slice(0, lineStart).split("\n");
  const intoList = (dash: number) => {
    path.unshift(0);
    seek = dash;
    mode = "list";
    items = 0;
  };
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = yamlLine(lines[i]);
    if (!line) continue;
    if (mode === "map") {
      if (line.dash !== null && line.column === seek) {
        if (collecting && line.key) written.push(line.key);
        collecting = false;
        intoList(line.dash);
      } else if (line.column < seek) {
        if (!line.key) return null;
        path.unshift(line.key);
        collecting = false;
        if (line.dash !== null) intoList(line.dash);
        else seek = line.column;
      } else if (line.column === seek && collecting && line.key) written.push(line.key);
    } else if (line.dash !== null && line.dash === seek) {
      items += 1; // another item of the same list, above
    } else if (line.key && (line.column < seek || (line.column === seek && line.dash === null))) {
      path[0] = items;
      path.unshift(line.key);
      if (line.dash !== null) intoList(line.dash);
      else {
        seek = line.column;
        mode = "map";
      }
    } else if (line.column < seek) return null;
  }
  if (mode === "list") path[0] = items;
  // the same mapping's keys written below the cursor (`type: agent` under the line being typed)
  for (const raw of text.slice(pos).split("\n").slice(1)) {
    const line = yamlLine(raw);
    if (!line) continue;
    if (line.column < column || (line.dash !== null && line.dash < column)) break;
    if (line.column === column && line.key) written.push(line.key);
  }
  const prefix = valueMatch ? valueMatch[4] : (match[3] ?? "");
  return { path, key: valueMatch?.[3], prefix, from: pos - prefix.length, written };
}
