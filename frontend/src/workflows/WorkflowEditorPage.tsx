import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import type { components } from "../api/schema";
import { api, textBody, unwrap } from "../api/typed";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { CodeEditor, type LineProblem, type SourceFormat } from "./CodeEditor";
import { asDefinitionSchema } from "./definitionSchema";
import { convert, definitionOf, format as formatAs, read, serverProblems } from "./source";
import "./workflows.css";

/** A starting point for a new workflow (a demo workflow's YAML). */
export type Template = components["schemas"]["Template"];

export const BLANK_TEMPLATE = `name: My workflow
description: What it does, in a sentence.
variables:
  who: {type: string, default: world, description: Whom to greet}
steps:
  - id: greet
    name: Say hello
    tool: echo
    params: {message: "hello {{ vars.who }}"}
`;

const FORMAT_KEY = "coach.editorFormat";

function storedFormat(): SourceFormat {
  try {
    return localStorage.getItem(FORMAT_KEY) === "json" ? "json" : "yaml";
  } catch {
    return "yaml";
  }
}

/**
 * Create a workflow, or edit one (saving makes a new version), as YAML or JSON in a code editor. The server
 * validates; its errors are marked on their lines and listed under the editor. A new workflow can start from a
 * template (the demo workflows).
 */
export default function WorkflowEditorPage() {
  const { id } = useParams();
  const editing = Boolean(id);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const labelId = useId();
  const hintId = useId();
  const [fmt, setFmt] = useState<SourceFormat>(storedFormat);
  const [text, setText] = useState<string | null>(editing ? null : BLANK_TEMPLATE);
  const [templateId, setTemplateId] = useState("");
  const [notice, setNotice] = useState<string | null>(null);

  const current = useQuery({
    queryKey: ["workflow", id ?? "", { version: null }],
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/workflows/{workflow_id}", { params: { path: { workflow_id: id ?? "" } }, signal })),
    enabled: editing,
  });
  const templates = useQuery({
    queryKey: ["workflows", "templates"],
    queryFn: ({ signal }) => unwrap(api.GET("/api/workflows/templates", { signal })),
    enabled: !editing,
    staleTime: Infinity,
  });
  // the definition format as JSON Schema: the editor's completion and inline checks (without it, the editor works
  // as before: the server's check on save is the judge)
  const format = useQuery({
    queryKey: ["workflows", "schema"],
    queryFn: ({ signal }) => unwrap(api.GET("/api/workflows/schema", { signal })),
    staleTime: Infinity,
    retry: false,
  });
  const schema = useMemo(() => asDefinitionSchema(format.data), [format.data]);
  useDocumentTitle(editing ? `Edit ${current.data?.name ?? "workflow"}` : "New workflow");

  // The stored definition, once, in the chosen format.
  useEffect(() => {
    if (editing && text === null && current.data) setText(formatAs(definitionOf(current.data), fmt));
  }, [editing, text, current.data, fmt]);

  const save = useMutation({
    mutationFn: (source: string) => {
      // the text as written, in its format: the server checks it and places its problems on the lines
      const body = textBody(source, fmt === "yaml" ? "application/yaml" : "application/json");
      return editing
        ? unwrap(api.PUT("/api/workflows/{workflow_id}", { ...body, params: { path: { workflow_id: id ?? "" } } }))
        : unwrap(api.POST("/api/workflows", body));
    },
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: ["workflows"] });
      void queryClient.invalidateQueries({ queryKey: ["workflow", saved.id] });
      navigate(`/workflows/${encodeURIComponent(saved.id)}`, {
        state: { notice: editing ? `Saved version ${saved.version}.` : `Created ${saved.name}.` },
      });
    },
  });

  const { placed, unplaced } = useMemo(() => serverProblems(save.error), [save.error]);
  const problems: LineProblem[] = placed;

  const switchFormat = (to: SourceFormat) => {
    if (to === fmt || text === null) return;
    const converted = convert(text, fmt, to);
    if (converted === undefined) {
      const result = read(text, fmt);
      setNotice(
        `The ${fmt.toUpperCase()} cannot be read, so it stays ${fmt.toUpperCase()}` +
          ("problem" in result ? ` (line ${result.problem.line}: ${result.problem.message})` : "") +
          ".",
      );
      return;
    }
    setNotice(null);
    save.reset();
    setText(converted);
    setFmt(to);
    try {
      localStorage.setItem(FORMAT_KEY, to);
    } catch {
      // private mode: the choice lasts for this page only
    }
  };

  const useTemplate = () => {
    if (!templateId) {
      setText(fmt === "yaml" ? BLANK_TEMPLATE : (convert(BLANK_TEMPLATE, "yaml", "json") ?? BLANK_TEMPLATE));
    } else {
      const template = templates.data?.items.find((t) => t.id === templateId);
      if (!template) return;
      setText(fmt === "yaml" ? template.yaml : (convert(template.yaml, "yaml", "json") ?? template.yaml));
    }
    save.reset();
    setNotice(null);
  };

  if (editing && current.isPending) return <Loading label="Loading the workflow…" />;
  if (editing && current.isError) {
    return <ErrorNotice title="Could not load the workflow" error={current.error} onRetry={() => void current.refetch()} />;
  }

  const failure = save.error && placed.length === 0 && unplaced.length === 0 ? save.error : null;
  const count = placed.length + unplaced.length;
  return (
    <section aria-labelledby="editor-heading" className="workflow-editor">
      <Link to={editing ? `/workflows/${encodeURIComponent(id ?? "")}` : "/workflows"} className="back">
        ← {editing ? current.data?.name : "All workflows"}
      </Link>
      <h1 id="editor-heading">{editing ? `Edit ${current.data?.name}` : "New workflow"}</h1>
      <p className="lead">
        {editing
          ? `Saving makes version ${(current.data?.latest_version ?? 0) + 1}; executions already started keep the version they began with.`
          : "Write the definition, or start from a template."}{" "}
        Every field is described in the project's <code>docs/workflow-definitions.md</code>.
      </p>

      <div className="workflow-editor__bar">
        <fieldset className="segmented">
          <legend>Format</legend>
          {(["yaml", "json"] as const).map((f) => (
            <label key={f}>
              <input type="radio" name="format" value={f} checked={fmt === f} onChange={() => switchFormat(f)} />
              {f.toUpperCase()}
            </label>
          ))}
        </fieldset>
        {!editing ? (
          <div className="field field--inline">
            <label htmlFor="editor-template">Template</label>
            <select id="editor-template" value={templateId} onChange={(e) => setTemplateId(e.target.value)}>
              <option value="">Blank (hello world)</option>
              {(templates.data?.items ?? []).map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
            <button type="button" className="button button--secondary" onClick={useTemplate}>
              Use template
            </button>
          </div>
        ) : null}
      </div>
      {notice ? (
        <p className="notice notice--info" role="status">
          {notice}
        </p>
      ) : null}

      <p id={labelId} className="workflow-editor__label">
        Definition ({fmt.toUpperCase()})
      </p>
      <p id={hintId} className="muted">
        Tab indents; press Esc then Tab to leave the editor. Ctrl+Space lists the fields a step of its type takes.
      </p>
      {text !== null ? (
        <CodeEditor
          id="workflow-source"
          value={text}
          format={fmt}
          problems={problems}
          onChange={setText}
          labelledBy={labelId}
          describedBy={hintId}
          schema={schema}
        />
      ) : null}

      {count > 0 ? (
        <div className="notice notice--error" role="alert" aria-labelledby="editor-problems-title">
          <p id="editor-problems-title" className="notice__title">
            {count === 1 ? "1 problem" : `${count} problems`}: nothing was saved.
          </p>
          <ul className="workflow-editor__problems">
            {placed.map((p, i) => (
              <li key={`p${i}`}>
                <span className="mono">line {p.line}</span> {p.message}
              </li>
            ))}
            {unplaced.map(([field, message], i) => (
              <li key={`u${i}`}>
                <span className="mono">{field}</span> {message}
              </li>
            ))}
          </ul>
        </div>
      ) : failure ? (
        <p className="notice notice--error" role="alert">
          Not saved: {errorMessage(failure)}
          {failure instanceof ApiError && failure.status === 403 ? " (leads and admins edit workflows)" : ""}
        </p>
      ) : null}

      <div className="workflow-editor__actions">
        <button
          type="button"
          className="button"
          disabled={save.isPending || text === null}
          aria-busy={save.isPending || undefined}
          onClick={() => text !== null && save.mutate(text)}
        >
          {save.isPending ? "Saving…" : editing ? "Save new version" : "Create workflow"}
        </button>
        <Link to={editing ? `/workflows/${encodeURIComponent(id ?? "")}` : "/workflows"} className="button button--secondary">
          Cancel
        </Link>
      </div>
    </section>
  );
}
