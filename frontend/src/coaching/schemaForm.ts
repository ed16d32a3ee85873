/**
 * The correction editor's schema work: the schema its form is drawn from,
 * validation against the tool's schema, and field errors (the browser's and
 * the server's 422 `details`) in the shape the form shows them.
 */
import type { RJSFSchema } from "@rjsf/utils";
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
  if (typeof value === "number") return { type: Number.isInteger(value) ? "integer" : "number" };
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
 * a tool with a loose schema still gets a form of its params.
 */
export function formSchema(toolSchema: JsonSchema | null | undefined, params: unknown): RJSFSchema {
  const schema: JsonSchema = isPlainObject(toolSchema) ? { ...toolSchema } : { type: "object" };
  if (!isPlainObject(params)) return schema as RJSFSchema;
  const listed = isPlainObject(schema.properties) ? { ...(schema.properties as Record<string, JsonSchema>) } : {};
  if (schema.additionalProperties !== false) {
    for (const [key, value] of Object.entries(params)) {
      if (!(key in listed)) listed[key] = inferSchema(value);
    }
  }
  return { ...schema, type: schema.type ?? "object", properties: listed } as unknown as RJSFSchema;
}

/** Problems of `params` against the tool's own schema (the one the server checks). */
export function validateParams(toolSchema: JsonSchema | null | undefined, params: unknown): FieldError[] {
  const schema = isPlainObject(toolSchema) ? toolSchema : { type: "object" };
  try {
    return validate(schema, params).map(({ path, message }) => ({ path, message }));
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
