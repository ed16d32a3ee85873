import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { asDefinitionSchema, fieldsAt, schemaProblems, textProblems, valuesAt, yamlContext, type JsonSchema } from "./definitionSchema";

// The definition format as GET /api/workflows/schema serves it: the checked-in OpenAPI document's WorkflowDefinition
// and its components, with the references JSON Schema's way (api/json_schema.py does the same, and more)
function served(): JsonSchema {
  const document = JSON.parse(readFileSync(resolve(process.cwd(), "src/api/openapi.json"), "utf-8")) as {
    components: { schemas: Record<string, JsonSchema> };
  };
  const text = JSON.stringify(document.components.schemas).replaceAll("#/components/schemas/", "#/definitions/");
  const all = JSON.parse(text) as Record<string, JsonSchema>;
  const reached = new Set<string>();
  const visit = (name: string) => {
    if (reached.has(name)) return;
    reached.add(name);
    for (const [, ref] of JSON.stringify(all[name]).matchAll(/"#\/definitions\/(\w+)"/g)) visit(ref);
  };
  visit("WorkflowDefinition");
  const definitions = Object.fromEntries([...reached].map((name) => [name, all[name]]));
  return { ...all.WorkflowDefinition, definitions };
}

const schema = served();
const labels = (offers: { label: string }[]) => offers.map((o) => o.label);

const YAML = `name: Pay
steps:
  - id: total
    tool: echo
  - id: sign_off
    type: approval
    approvers:
      roles: [lead]
`;

describe("the definition format's help", () => {
  it("takes only a schema of definitions", () => {
    expect(asDefinitionSchema(schema)).toBe(schema);
    expect(asDefinitionSchema({ id: "wf-9" })).toBeNull();
    expect(asDefinitionSchema(null)).toBeNull();
  });

  it("offers a step the fields of its own type, and every step type as a type's value", () => {
    const data = { name: "x", steps: [{ id: "a", type: "approval" }, { id: "b", type: "agent" }, { id: "c", tool: "echo" }] };
    expect(labels(fieldsAt(schema, data, ["steps", 0], ["id", "type"]))).toEqual(
      expect.arrayContaining(["quorum", "approvers", "separate_duties", "on_timeout", "message"]),
    );
    expect(labels(fieldsAt(schema, data, ["steps", 0], ["id", "type"]))).not.toContain("goal");
    expect(labels(fieldsAt(schema, data, ["steps", 1], []))).toEqual(expect.arrayContaining(["goal", "tools", "max_tool_iterations"]));
    expect(labels(fieldsAt(schema, data, ["steps", 2], ["id", "tool"]))).toEqual(expect.arrayContaining(["params", "retries"]));
    expect(labels(fieldsAt(schema, data, [], ["name", "steps"]))).toEqual(expect.arrayContaining(["variables", "human_timeout_s"]));
    expect(labels(valuesAt(schema, data, ["steps", 0, "type"]))).toEqual(["action", "decision", "validation", "human_input", "approval", "agent"]);
    expect(labels(valuesAt(schema, data, ["steps", 0, "on_timeout"]))).toEqual(["approve", "reject", "fail"]);
    expect(labels(valuesAt(schema, data, ["steps", 0, "approvers", "roles", 0]))).toEqual(["operator", "lead", "admin"]);
  });

  it("reads where the cursor is in YAML from the lines above it", () => {
    const at = (text: string) => yamlContext(text, text.length);
    expect(at(`${YAML}    quo`)).toMatchObject({ path: ["steps", 1], prefix: "quo", written: ["approvers", "type", "id"] });
    expect(at(`${YAML}      us`)).toMatchObject({ path: ["steps", 1, "approvers"], prefix: "us", written: ["roles"] });
    expect(at(`${YAML}    on_timeout: re`)).toMatchObject({ path: ["steps", 1], key: "on_timeout", prefix: "re" });
    expect(at(`${YAML}  - ty`)).toMatchObject({ path: ["steps", 2], prefix: "ty", written: [] });
    expect(at("steps:\n  - id: a\n    approvers:\n      roles: [lead]\n  - id: b\n    ")).toMatchObject({ path: ["steps", 1] });
    expect(at("name: x\nhuman")).toMatchObject({ path: [], prefix: "human", written: ["name"] });
  });

  it("finds what the schema refuses, each step by its own type, on the text of the value", () => {
    const data = {
      name: "x",
      steps: [{ id: "a", type: "approval", quorum: 0 }, { id: "b", type: "beam" }, { id: "c", type: "agent" }, { id: "d", tool: "echo" }],
    };
    const problems = schemaProblems(schema, data).map((p) => p.path.join("."));
    expect(problems).toEqual(["steps.0.quorum", "steps.1.type", "steps.2.goal"]);
    const text = "name: x\nsteps:\n  - id: a\n    type: approval\n    quorum: 0\n";
    const [placed] = textProblems(schema, text);
    expect(placed.message).toBe("steps[0].quorum: must be 1 or more");
    expect(text.slice(placed.from, placed.to)).toBe("0");
    expect(textProblems(schema, "name: x\nsteps: [\n")).toEqual([]); // unreadable: the server says where
  });

  it("finds nothing wrong in the demo's definitions", () => {
    const demo = ["invoice_intake", "refund_review", "supplier_payment", "service_check", "invoice_agent"];
    for (const name of demo) {
      const text = readFileSync(resolve(process.cwd(), "..", "demo", `${name}.yaml`), "utf-8");
      expect(textProblems(schema, text), name).toEqual([]);
    }
  });
});
