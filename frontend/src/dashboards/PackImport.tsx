import { useId, useState, type ChangeEvent, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import { useImportPack } from "./queries";
import type { WorkflowMetrics } from "../api/metrics";
import { WorkflowSelect } from "./WorkflowSelect";

const FROM_FILE = "";

/** The server's `details` ({field: [messages]}, maybe nested) as "field: message" lines. */
export function detailLines(details: unknown, prefix = ""): string[] {
  if (details == null) return [];
  if (typeof details === "string") return [prefix ? `${prefix}: ${details}` : details];
  if (Array.isArray(details)) return details.flatMap((d) => detailLines(d, prefix));
  if (typeof details === "object")
    return Object.entries(details as Record<string, unknown>).flatMap(([key, value]) =>
      detailLines(value, prefix ? `${prefix}.${key}` : key),
    );
  return [prefix ? `${prefix}: ${String(details)}` : String(details)];
}

/** What is wrong with the pasted text before it is sent, or null. */
function parseExport(text: string): { body: Record<string, unknown> } | { problem: string } {
  if (!text.trim()) return { problem: "Paste a pack's JSON or choose an exported file first." };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: `This is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { problem: "A pack export is a JSON object (the file “Export JSON” saves)." };
  return { body: parsed as Record<string, unknown> };
}

/** Import a pack exported here or elsewhere, optionally into another workflow; shows the server's 422 details. */
export function PackImport({ workflows }: { workflows: WorkflowMetrics[] }) {
  const importPack = useImportPack();
  const [text, setText] = useState("");
  const [target, setTarget] = useState(FROM_FILE);
  const [problem, setProblem] = useState<string | null>(null);
  const ids = { file: useId(), text: useId(), target: useId(), hint: useId() };

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    try {
      setText(await file.text());
      setProblem(null);
    } catch (error) {
      setProblem(`Could not read ${file.name}: ${errorMessage(error)}`);
    }
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (importPack.isPending) return;
    importPack.reset();
    const parsed = parseExport(text);
    if ("problem" in parsed) {
      setProblem(parsed.problem);
      return;
    }
    setProblem(null);
    const body = target ? { ...parsed.body, workflow_id: target } : parsed.body;
    importPack.mutate(body, { onSuccess: () => setText("") });
  };

  const nameOf = (id: string) => workflows.find((w) => w.workflow_id === id)?.name ?? id;
  const failure = importPack.error;
  const failureLines = failure instanceof ApiError ? detailLines(failure.details) : [];

  return (
    <form className="import" onSubmit={onSubmit} aria-labelledby="import-heading" noValidate>
      <h2 id="import-heading">Import a pack</h2>
      <p className="muted">
        Bring in a pack exported from this or another Coach. Importing replaces the pack of the same workflow step.
      </p>
      <div className="field">
        <label htmlFor={ids.file}>Exported file</label>
        <input id={ids.file} type="file" accept=".json,application/json" onChange={(e) => void onFile(e)} />
      </div>
      <div className="field">
        <label htmlFor={ids.text}>Pack JSON</label>
        <span className="field__hint" id={ids.hint}>
          Filled in from the file, or paste it here.
        </span>
        <textarea
          id={ids.text}
          rows={8}
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-describedby={ids.hint}
          aria-invalid={problem || failure ? true : undefined}
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor={ids.target}>Import into</label>
        <WorkflowSelect
          id={ids.target}
          value={target}
          onChange={setTarget}
          workflows={workflows}
          firstLabel="The workflow named in the JSON"
          firstValue={FROM_FILE}
        />
      </div>
      <button type="submit" className="button" aria-disabled={importPack.isPending || undefined} aria-busy={importPack.isPending || undefined}>
        {importPack.isPending ? "Importing…" : "Import pack"}
      </button>

      <div role="status" className="import__status">
        {importPack.isSuccess ? (
          <p>
            Imported the pack of step <code>{importPack.data.step_id}</code> of {nameOf(importPack.data.workflow_id)}
            {" — "}
            <Link to={`/correction-packs?pack=${encodeURIComponent(importPack.data.id)}`}>show it</Link>.
          </p>
        ) : null}
      </div>
      {problem ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">Nothing was imported</p>
          <p>{problem}</p>
        </div>
      ) : failure ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">The server refused the pack</p>
          <p>{errorMessage(failure)}</p>
          {failureLines.length ? (
            <ul className="error-list">
              {failureLines.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
