import type { RJSFSchema } from "@rjsf/utils";
import { describe, expect, it } from "vitest";
import { interpretingValidator, validate } from "./jsonSchema";
import { diffParams } from "./diff";
import { formSchema } from "./schemaForm";

const HTTP = {
  type: "object",
  properties: {
    method: { enum: ["GET", "POST"], default: "GET" },
    url: { type: "string", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" },
    headers: { type: "object", additionalProperties: { type: "string" } },
    command: { type: "array", items: { type: "string" }, minItems: 1 },
    timeout_s: { type: "number", exclusiveMinimum: 0 },
  },
  required: ["url"],
  additionalProperties: false,
};

describe("validate (the interpreting JSON Schema validator)", () => {
  it("accepts valid params", () => {
    expect(validate(HTTP, { url: "https://x", headers: { A: "b" }, command: ["ls"], timeout_s: 0.5 })).toEqual([]);
  });

  it("names each problem by its field path", () => {
    const problems = validate(HTTP, {
      method: "PUT",
      url: "ftp://x",
      headers: { A: 1 },
      command: [],
      timeout_s: 0,
      extra: true,
    });
    expect(problems.map((p) => [p.path, p.keyword])).toEqual([
      ["method", "enum"],
      ["url", "pattern"],
      ["headers.A", "type"],
      ["command", "minItems"],
      ["timeout_s", "exclusiveMinimum"],
      ["", "additionalProperties"],
    ]);
    expect(validate(HTTP, {}).map((p) => [p.path, p.message])).toEqual([["url", "is required"]]);
    expect(validate(HTTP, { url: "https://x", command: ["a", 2] })[0]).toMatchObject({ path: "command.1" });
  });

  it("reads $ref, anyOf, oneOf, allOf, not, const and if/then/else", () => {
    const schema = {
      $defs: { port: { type: "integer", minimum: 1, maximum: 65535 } },
      type: "object",
      properties: {
        port: { $ref: "#/$defs/port" },
        id: { anyOf: [{ type: "string" }, { type: "integer" }] },
        kind: { oneOf: [{ const: "a" }, { const: "b" }] },
        name: { allOf: [{ minLength: 2 }, { not: { const: "root" } }] },
      },
      if: { properties: { kind: { const: "a" } } },
      then: { required: ["port"] },
    };
    expect(validate(schema, { kind: "b" })).toEqual([]);
    expect(validate(schema, { kind: "a" }).map((p) => p.path)).toEqual(["port"]);
    expect(validate(schema, { port: 0, id: true, kind: "c", name: "root" }).map((p) => [p.path, p.keyword])).toEqual([
      ["port", "minimum"],
      ["id", "anyOf"],
      ["kind", "oneOf"],
      ["name", "not"],
    ]);
  });

  it("serves rjsf: errors with property paths, an error schema, and isValid", () => {
    const { errors, errorSchema } = interpretingValidator.validateFormData({ url: 5 }, HTTP as RJSFSchema);
    expect(errors).toEqual([expect.objectContaining({ property: ".url", message: "must be a string, not 5" })]);
    expect(errorSchema).toEqual({ url: { __errors: ["must be a string, not 5"] } });
    expect(interpretingValidator.isValid({ type: "integer" }, 3, {})).toBe(true);
    expect(interpretingValidator.isValid({ type: "integer" }, 3.5, {})).toBe(false);
  });
});

describe("diffParams", () => {
  it("lists added, removed and changed fields, nested ones by path", () => {
    expect(diffParams({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 4 }, e: [1, 2], f: "x" })).toEqual([
      { path: "b.c", kind: "changed", before: 2, after: 4 },
      { path: "b.d", kind: "removed", before: 3 },
      { path: "e", kind: "changed", before: [1], after: [1, 2] },
      { path: "f", kind: "added", after: "x" },
    ]);
    expect(diffParams({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe("formSchema", () => {
  it("adds a field for each param a loose tool schema does not list, and none past additionalProperties: false", () => {
    expect(formSchema({ type: "object" }, { message: "hi", n: 2, on: true, tags: ["x"] })).toEqual({
      type: "object",
      properties: {
        message: { type: "string" },
        n: { type: "number" },
        on: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
      },
    });
    const strict = formSchema(HTTP, { url: "https://x", stray: 1 });
    expect(Object.keys(strict.properties ?? {})).not.toContain("stray");
  });
});
