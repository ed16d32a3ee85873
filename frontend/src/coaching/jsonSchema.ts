/**
 * JSON Schema validation for the correction editor, with the `jsonschema`
 * package, which interprets schemas.
 *
 * Why not Ajv (@rjsf/validator-ajv8): Ajv turns every schema into code with
 * `new Function`, which the app's Content-Security-Policy (`script-src 'self'`,
 * no 'unsafe-eval') forbids — and the tools' schemas only arrive at run time,
 * so they cannot be precompiled. This module turns `jsonschema`'s errors into
 * field problems (a missing or unexpected field is reported on that field) and
 * plugs into rjsf as its `validator`.
 */
import type { ErrorSchema, RJSFSchema, RJSFValidationError, ValidationData, ValidatorType } from "@rjsf/utils";
import { Validator, type ValidationError } from "jsonschema";

export interface SchemaProblem {
  /** Dotted path of the value, e.g. `headers.Accept` or `command.0`; "" for the root. */
  path: string;
  message: string;
  keyword: string;
}

type Schema = Record<string, unknown> | boolean;

const validator = new Validator();

function join(path: (string | number)[], key?: string | number): string {
  return (key === undefined ? path : [...path, key]).join(".");
}

const show = (value: unknown) => (typeof value === "string" ? `'${value}'` : JSON.stringify(value));

function problemOf(error: ValidationError): SchemaProblem {
  const path = error.path as (string | number)[];
  switch (error.name) {
    case "type": {
      const types = (Array.isArray(error.argument) ? error.argument : [error.argument]) as string[];
      return {
        path: join(path),
        keyword: "type",
        // "must be a number, not 'abc'": what to type, then what was typed
        message: `must be ${types.map((t) => `${/^[aeiou]/.test(t) ? "an" : "a"} ${t}`).join(" or ")}, not ${show(error.instance)}`,
      };
    }
    case "enum":
      return {
        path: join(path),
        keyword: "enum",
        message: `${show(error.instance)} is not one of ${(error.argument as unknown[]).map(show).join(", ")}`,
      };
    case "required":
      return { path: join(path, String(error.argument)), keyword: "required", message: "is required" };
    case "additionalProperties":
      return { path: join(path), keyword: "additionalProperties", message: `unexpected field: ${error.argument}` };
    case "minimum":
      return { path: join(path), keyword: "minimum", message: `must be ${error.argument} or more` };
    case "maximum":
      return { path: join(path), keyword: "maximum", message: `must be ${error.argument} or less` };
    case "minLength":
      if (error.argument === 1) return { path: join(path), keyword: "minLength", message: "must not be empty" };
      break;
    case "oneOf":
    case "anyOf":
      return { path: join(path), keyword: error.name, message: "does not match any of the allowed forms" };
  }
  return { path: join(path), keyword: error.name, message: error.message };
}

/** Every problem of `value` against `schema`; `root` lends its definitions to a sub-schema's `$ref`s. */
export function validate(schema: Schema, value: unknown, root: Schema = schema): SchemaProblem[] {
  if (schema === true || schema === undefined) return [];
  if (schema === false) return [{ path: "", keyword: "false", message: "no value is allowed here" }];
  const withDefinitions =
    root !== schema && typeof root === "object"
      ? { ...schema, $defs: root.$defs, definitions: root.definitions }
      : schema;
  // an allOf error only repeats the errors of its parts, which are reported on their own
  return validator
    .validate(value, withDefinitions as never, { nestedErrors: false })
    .errors.filter((error) => error.name !== "allOf")
    .map(problemOf);
}

/** `a.b.0` as rjsf's property path `.a.b.0`. */
const property = (path: string) => (path ? `.${path}` : "");

/** Field errors in rjsf's nested `{field: {__errors: [...]}}` shape. */
export function toErrorSchema(problems: { path: string; message: string }[]): ErrorSchema {
  const root: Record<string, unknown> = {};
  for (const { path, message } of problems) {
    let node = root;
    for (const part of path ? path.split(".") : []) {
      node[part] = (node[part] as Record<string, unknown> | undefined) ?? {};
      node = node[part] as Record<string, unknown>;
    }
    const list = (node.__errors as string[] | undefined) ?? [];
    if (!list.includes(message)) list.push(message);
    node.__errors = list;
  }
  return root as ErrorSchema;
}

/** The validator rjsf calls (validation, and picking `anyOf`/`oneOf` options), without `eval`. */
export const interpretingValidator: ValidatorType = {
  validateFormData(formData, schema, customValidate, transformErrors, uiSchema): ValidationData<unknown> {
    const problems = validate(schema as Schema, formData);
    let errors: RJSFValidationError[] = problems.map((p) => ({
      name: p.keyword,
      property: property(p.path),
      message: p.message,
      stack: `${p.path || "params"} ${p.message}`,
    }));
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    const errorSchema = toErrorSchema(problems);
    if (customValidate) {
      // rjsf's custom validation is not used by Coach; report it rather than silently ignoring it
      throw new Error("interpretingValidator does not support customValidate");
    }
    return { errors, errorSchema };
  },
  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    try {
      return validate(schema as Schema, formData, rootSchema as Schema).length === 0;
    } catch {
      return false;
    }
  },
  rawValidation(schema: RJSFSchema, formData?: unknown) {
    try {
      return { errors: validate(schema as Schema, formData) as never[] };
    } catch (err) {
      return { validationError: err instanceof Error ? err : new Error(String(err)) };
    }
  },
};
