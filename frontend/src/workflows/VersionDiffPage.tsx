import { MergeView } from "@codemirror/merge";
import { yaml } from "@codemirror/lang-yaml";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { definitionOf, format } from "./source";
import { prefersDark, themeFor } from "./editorTheme";
import "./workflows.css";

/** A workflow's definition, at `version` or its latest. */
const fetchVersion = (workflow_id: string, version: number | undefined, signal?: AbortSignal) =>
  unwrap(api.GET("/api/workflows/{workflow_id}", { params: { path: { workflow_id }, query: version === undefined ? {} : { version } }, signal }));

function versionParam(params: URLSearchParams, key: string, fallback: number, latest: number): number {
  const n = Number.parseInt(params.get(key) ?? "", 10);
  return Number.isFinite(n) && n >= 1 && n <= latest ? n : fallback;
}

/** Two versions side by side (CodeMirror's merge view), read only; the changed lines are marked. */
function SideBySide({ before, after, labels }: { before: string; after: string; labels: [string, string] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    const readOnly = (label: string) => [
      basicSetup,
      yaml(),
      themeFor(prefersDark()),
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.contentAttributes.of({ "aria-label": label }),
    ];
    const view = new MergeView({
      a: { doc: before, extensions: readOnly(labels[0]) },
      b: { doc: after, extensions: readOnly(labels[1]) },
      parent: host.current,
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    return () => view.destroy();
  }, [before, after, labels]);
  return <div ref={host} className="code-editor code-editor--diff" data-testid="version-diff" />;
}

/** `/workflows/:id/diff?from=&to=`: what changed between two versions of a workflow's definition. */
export default function VersionDiffPage() {
  const { id = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const latest = useQuery({
    queryKey: ["workflow", id, { version: null }],
    queryFn: ({ signal }) => fetchVersion(id, undefined, signal),
  });
  const newest = latest.data?.latest_version ?? 1;
  const to = versionParam(params, "to", newest, newest);
  const from = versionParam(params, "from", Math.max(1, to - 1), newest);
  const left = useQuery({
    queryKey: ["workflow", id, { version: from }],
    queryFn: ({ signal }) => fetchVersion(id, from, signal),
    enabled: latest.isSuccess,
  });
  const right = useQuery({
    queryKey: ["workflow", id, { version: to }],
    queryFn: ({ signal }) => fetchVersion(id, to, signal),
    enabled: latest.isSuccess,
  });
  useDocumentTitle(`Versions of ${latest.data?.name ?? "workflow"}`);

  if (latest.isPending) return <Loading label="Loading the workflow…" />;
  if (latest.isError) return <ErrorNotice title="Could not load the workflow" error={latest.error} />;
  const versions = Array.from({ length: newest }, (_, i) => newest - i);
  const choose = (key: "from" | "to", value: string) => setParams({ from: String(from), to: String(to), [key]: value });

  return (
    <section aria-labelledby="diff-heading" className="workflow-editor">
      <Link to={`/workflows/${encodeURIComponent(id)}`} className="back">
        ← {latest.data.name}
      </Link>
      <h1 id="diff-heading">Compare versions of {latest.data.name}</h1>
      <form className="filters" aria-label="Versions to compare" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="diff-from">Before</label>
          <select id="diff-from" value={from} onChange={(e) => choose("from", e.target.value)}>
            {versions.map((v) => (
              <option key={v} value={v}>
                v{v}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="diff-to">After</label>
          <select id="diff-to" value={to} onChange={(e) => choose("to", e.target.value)}>
            {versions.map((v) => (
              <option key={v} value={v}>
                v{v}
                {v === newest ? " (latest)" : ""}
              </option>
            ))}
          </select>
        </div>
      </form>
      {newest === 1 ? <p className="muted">This workflow has one version: there is nothing to compare yet.</p> : null}
      {left.isError || right.isError ? (
        <ErrorNotice title="Could not load a version" error={left.error ?? right.error} />
      ) : left.data && right.data ? (
        <>
          <p className="muted" id="diff-legend">
            Left: v{from}. Right: v{to}. Changed lines are highlighted; unchanged stretches are folded.
          </p>
          <SideBySide
            before={format(definitionOf(left.data), "yaml")}
            after={format(definitionOf(right.data), "yaml")}
            labels={[`Version ${from}`, `Version ${to}`]}
          />
        </>
      ) : (
        <Loading label="Loading the versions…" />
      )}
    </section>
  );
}
