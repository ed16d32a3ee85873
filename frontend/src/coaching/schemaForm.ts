/**
 * The correction editor's schema work: the schema its form is drawn from,
 * validation against the tool's schema, and field errors (the browser's and
 * the server's 422 `details`) in the shape the form shows them.
 */
import type { RJSFSchema, UiSchema } from "@rjsf/utils";
import { ApiError } from "../api/client";
import { isPlainObject } from "../format";
import { validate } from "./jsonSchema";
import type { JsonSchema } from "./types";

export interface FieldError {
  /** Dotted path of the field in the params; "" for the params as a whole. */
  path: string;
  message: string;
}

/** A schema for a value whose field the tool's schema does not describe (e.g. `echo` takes any object). */
export function inferSchema(value: unknown): JsonSchema {
  if (typeof value === "string") return { type: "string" };
  if (typeof value === "boolean") return { type: "boolean" };
  // a number, whole or not: 12 may well become 12.5 (the server keeps the JSON type, not the integer-ness)
  if (typeof value === "number") return { type: "number" };
  if (Array.isArray(value)) return { type: "array", items: value.length ? inferSchema(value[0]) : {} };
  if (isPlainObject(value)) {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, inner] of Object.entries(value)) properties[key] = inferSchema(inner);
    return { type: "object", properties };
  }
  return {};
}

/**
 * The schema the form is drawn from: the tool's schema, plus a field for each
 * suggested param it does not list (when it allows extra properties), so that
 * a tool with a loose schema still gets a form of its params. Such a field
 * keeps the type it was suggested with, and one the step's definition sets
 * (`defined`) is required: later steps may read it (the server refuses the
 * same, core/coaching/soundness.py).
 */
export function formSchema(
  toolSchema: JsonSchema | null | undefined,
  params: unknown,
  defined: unknown = undefined,
  templates = false,
): RJSFSchema {
  const schema: JsonSchema = isPlainObject(toolSchema) ? { ...toolSchema } : { type: "object" };
  if (!isPlainObject(params)) return schema as RJSFSchema;
  const listed = isPlainObject(schema.properties) ? { ...(schema.properties as Record<string, JsonSchema>) } : {};
  const required = Array.isArray(schema.required) ? [...(schema.required as string[])] : [];
  for (const [key, value] of Object.entries(params)) {
    if (key in listed) {
      if (templates && hasTemplate(value)) {
        // a template decides the value when the step runs: edited as the text it is (a string field keeps its
        // schema: a literal typed in its place is judged by it; the template itself is not, see validateParams)
        const own = listed[key] as JsonSchema;
        listed[key] = isPlainObject(own) && own.type === "string"
          ? { ...own, description: TEMPLATE_NOTE }
          : { type: "string", title: key, description: TEMPLATE_NOTE };
      } else if (untyped(listed[key]) && value !== undefined) {
        // a field the tool takes in any shape (`json: {}`): drawn as the suggested value's shape, so it is editable
        listed[key] = { ...listed[key], ...inferSchema(value) };
      }
      continue;
    }
    if (schema.additionalProperties === false) continue;
    listed[key] = templates && hasTemplate(value) ? { type: "string", description: TEMPLATE_NOTE } : inferSchema(value);
    if (isPlainObject(defined) && key in defined && !required.includes(key)) required.push(key);
  }
  const drawn: JsonSchema = { ...schema, type: schema.type ?? "object", properties: listed };
  if (required.length) drawn.required = required;
  return drawn as unknown as RJSFSchema;
}

const TEMPLATE_NOTE = "A template: checked once rendered, when the step is about to run.";

/** Whether a value is (or holds) a template the server renders when the step runs: `{{ … }}` or `{% … %}`. */
export function hasTemplate(value: unknown): boolean {
  if (typeof value === "string") return value.includes("{{") || value.includes("{%");
  if (Array.isArray(value)) return value.some(hasTemplate);
  if (isPlainObject(value)) return Object.values(value).some(hasTemplate);
  return false;
}

/** A schema that says nothing of the value's type (`{}`, or only a description). */
function untyped(schema: unknown): boolean {
  if (!isPlainObject(schema)) return schema === true;
  return !["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items"].some((k) => k in schema);
}

/** Whether the value at a dotted `path` of `params` (or one of the values holding it) is a template. */
export function templatedAt(params: unknown, path: string): boolean {
  let value: unknown = params;
  for (const part of path ? path.split(".") : []) {
    if (typeof value === "string") break;
    if (Array.isArray(value)) value = value[Number(part)];
    else if (isPlainObject(value)) value = value[part];
    else return false;
    if (typeof value === "string" && hasTemplate(value)) return true;
  }
  return typeof value === "string" && hasTemplate(value);
}

const isNumeric = (type: unknown) =>
  type === "number" || type === "integer" || (Array.isArray(type) && (type.includes("number") || type.includes("integer")));

/**
 * The form's UI schema: a number field is a text box, so that what is typed
 * stays on screen: `abc` is shown with its error instead of being blanked (a
 * browser's number input reports anything it cannot parse as empty, which
 * would remove the field). rjsf still turns a number typed there into a number.
 */
export function formUiSchema(schema: unknown): UiSchema {
  const ui: UiSchema = {};
  if (!isPlainObject(schema)) return ui;
  if (isNumeric(schema.type)) ui["ui:options"] = { inputType: "text" };
  if (isPlainObject(schema.properties)) {
    for (const [key, inner] of Object.entries(schema.properties)) {
      const innerUi = formUiSchema(inner);
      if (Object.keys(innerUi).length) ui[key] = innerUi;
    }
  }
  if (isPlainObject(schema.items)) {
    const innerUi = formUiSchema(schema.items);
    if (Object.keys(innerUi).length) ui.items = innerUi;
  }
  return ui;
}

/**
 * Problems of `params` against the schema (the one the server checks). With `templates`, a value a template
 * decides is not judged now: the server renders it when the step is about to run, and checks it then.
 */
export function validateParams(toolSchema: JsonSchema | null | undefined, params: unknown, templates = false): FieldError[] {
  const schema = isPlainObject(toolSchema) ? toolSchema : { type: "object" };
  try {
    return validate(schema, params)
      .filter(({ path, keyword }) => !templates || keyword === "required" || !templatedAt(params, path))
      .map(({ path, message }) => ({ path, message }));
  } catch {
    // a schema this validator cannot read (a remote $ref): the server still checks the params
    return [];
  }
}

/**
 * The field errors of a 422 answer to a correction: `details` maps
 * `correction.<path>` (or `correction` for the whole) to messages.
 */
export function serverFieldErrors(error: unknown): FieldError[] {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) return [];
  const found: FieldError[] = [];
  for (const [key, value] of Object.entries(error.details)) {
    const path = key === "correction" ? "" : key.replace(/^correction\./, "");
    const messages = Array.isArray(value) ? value : [value];
    for (const message of messages) found.push({ path, message: String(message) });
  }
  return found;
}
