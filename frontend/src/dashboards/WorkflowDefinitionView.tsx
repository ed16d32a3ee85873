import type { ReactNode } from "react";
import { DataTable, type Column } from "./DataTable";
import { formatJson } from "../format";
import type { WorkflowDefinition, WorkflowStepDefinition } from "./types";

function listOf(value: string[] | string | undefined): string | null {
  if (value == null) return null;
  const items = Array.isArray(value) ? value : [value];
  return items.length ? items.join(", ") : "nothing (runs first)";
}

/** The facts of a step that are set, as label → value. */
function stepFacts(written: WorkflowDefinition["steps"][number]): [string, ReactNode][] {
  // every step type's fields, read alike (the generated step types are a union of one type per step type)
  const step = written as WorkflowStepDefinition;
  const facts: [string, ReactNode][] = [
    ["Id", <code>{step.id}</code>],
    ["Type", step.type ?? "action"],
  ];
  if (step.tool) facts.push(["Tool", <code>{step.tool}</code>]);
  const deps = listOf(step.depends_on);
  if (deps) facts.push(["Depends on", deps]);
  if (step.when) facts.push(["Runs when", <code>{step.when}</code>]);
  if (step.condition) facts.push(["Condition", <code>{step.condition}</code>]);
  if (step.timeout_s != null) facts.push(["Timeout", `${step.timeout_s} s`]);
  if (step.retries != null) facts.push(["Retries", String(step.retries)]);
  if (step.on_reject) facts.push(["On reject", step.on_reject]);
  if (step.requires_clarification)
    facts.push(["Asks first", step.clarification_question ?? "a clarification question"]);
  return facts;
}

interface Variable {
  name: string;
  spec: Record<string, unknown>;
}

const variableColumns: Column<Variable>[] = [
  { header: "Variable", rowHeader: true, cell: (v) => <code>{v.name}</code> },
  { header: "Type", cell: (v) => String(v.spec.type ?? "any") },
  { header: "Default", cell: (v) => ("default" in v.spec ? <code>{JSON.stringify(v.spec.default)}</code> : "—") },
  { header: "Required", cell: (v) => (v.spec.required ? "Yes" : "No") },
];

/** A version's input variables and steps, with each step's tool, params and conditions. */
export function WorkflowDefinitionView({ definition }: { definition: WorkflowDefinition }) {
  const variables = Object.entries(definition.variables ?? {}).map(([name, spec]) => ({
    name,
    spec: (typeof spec === "object" && spec !== null ? spec : { default: spec }) as Record<string, unknown>,
  }));
  return (
    <>
      <h3>Variables</h3>
      {variables.length ? (
        <DataTable caption={`Input variables of version ${definition.version}`} columns={variableColumns} rows={variables} rowKey={(v) => v.name} />
      ) : (
        <p className="empty">This workflow takes no input variables.</p>
      )}
      <h3>Steps</h3>
      <ol className="definition-steps" aria-label={`Steps of version ${definition.version}`}>
        {definition.steps.map((step, index) => (
          <li key={step.id} className="definition-step">
            <h4>
              {index + 1}. {step.name ?? step.id}
            </h4>
            <dl className="facts">
              {stepFacts(step).map(([label, value]) => (
                <div key={label} style={{ display: "contents" }}>
                  <dt>{label}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
            {step.params && Object.keys(step.params).length ? (
              <>
                <p className="step__label">Params</p>
                <pre className="code">{formatJson(step.params)}</pre>
              </>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}
