/** A workflow definition as text: YAML or JSON, converted both ways, and the server's errors placed on lines. */
import { parse, stringify } from "yaml";
import { ApiError } from "../api/client";
import { detailRows } from "../plans/source";
import type { LineProblem, SourceFormat } from "./CodeEditor";

/** What the editor shows of a stored definition (the fields the server keeps, in the documented order). */
export function definitionOf(workflow: {
  name: string;
  description?: string | null;
  variables?: Record<string, unknown>;
  steps: readonly unknown[];
  human_timeout_s?: number | null;
  on_human_timeout?: string | null;
  timeout_answer?: unknown;
}): Record<string, unknown> {
  const out: Record<string, unknown> = { name: workflow.name };
  if (workflow.description) out.description = workflow.description;
  if (workflow.variables && Object.keys(workflow.variables).length > 0) out.variables = workflow.variables;
  // the workflow's default deadline on human gates (core/gates), when it has one
  if (workflow.human_timeout_s != null) out.human_timeout_s = workflow.human_timeout_s;
  if (workflow.on_human_timeout != null) out.on_human_timeout = workflow.on_human_timeout;
  if (workflow.timeout_answer !== undefined) out.timeout_answer = workflow.timeout_answer;
  out.steps = workflow.steps.map(readableStep);
  return out;
}

const STEP_KEYS_FIRST = ["id", "name", "type", "tool", "params", "depends_on"];

/** A step's keys in the order people write them (id, name, type, tool, params…), whatever order storage kept. */
function readableStep(step: unknown): unknown {
  if (step === null || typeof step !== "object" || Array.isArray(step)) return step;
  const record = step as Record<string, unknown>;
  const keys = [...STEP_KEYS_FIRST.filter((k) => k in record), ...Object.keys(record).filter((k) => !STEP_KEYS_FIRST.includes(k))];
  return Object.fromEntries(keys.map((k) => [k, record[k]]));
}

export function format(definition: unknown, to: SourceFormat): string {
  return to === "json" ? `${JSON.stringify(definition, null, 2)}\n` : stringify(definition, { lineWidth: 0 });
}

/** The data of `text`, or why it cannot be read (with the line when the parser says). */
export function read(text: string, from: SourceFormat): { data: unknown } | { problem: LineProblem } {
  try {
    return { data: from === "json" ? JSON.parse(text) : parse(text) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const linePos = (err as { linePos?: { line: number }[] }).linePos;
    const jsonLine = /line (\d+)/.exec(message);
    const line = linePos?.[0]?.line ?? (jsonLine ? Number(jsonLine[1]) : 1);
    return { problem: { line, message } };
  }
}

/** The same definition in the other format; undefined when the text cannot be read. */
export function convert(text: string, from: SourceFormat, to: SourceFormat): string | undefined {
  if (from === to) return text;
  const result = read(text, from);
  return "data" in result ? format(result.data, to) : undefined;
}

/**
 * The server's 400/422 for a definition sent as text: the problems it placed on lines (`error.lines`), and the
 * rest (no line known) as `[field, message]` rows.
 */
export function serverProblems(error: unknown): { placed: LineProblem[]; unplaced: [string, string][] } {
  if (!(error instanceof ApiError) || (error.status !== 422 && error.status !== 400)) return { placed: [], unplaced: [] };
  const lines = error.lines ?? {};
  const placed: LineProblem[] = [];
  const unplaced: [string, string][] = [];
  for (const [field, message] of detailRows(error.details)) {
    const line = lines[field];
    if (typeof line === "number") placed.push({ line, message: field === "yaml" || field === "json" ? message : `${field}: ${message}` });
    else unplaced.push([field, message]);
  }
  return { placed, unplaced };
}
