import type { CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import { json } from "@codemirror/lang-json";
import { syntaxTree } from "@codemirror/language";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { indentWithTab } from "@codemirror/commands";
import { useEffect, useRef } from "react";
import { parseDocument } from "yaml";
import { followSystemTheme } from "./editorTheme";
import { fieldsAt, textProblems, valuesAt, yamlContext, type JsonSchema, type Offer, type Path } from "./definitionSchema";

export type SourceFormat = "yaml" | "json";

/** A problem to mark in the editor: its 1-based line and the message. */
export interface LineProblem {
  line: number;
  message: string;
}

const language = (format: SourceFormat) => (format === "yaml" ? yaml() : json());

/** The schema's completion for the format, when the schema is there. */
function help(schema: JsonSchema | null, format: SourceFormat) {
  if (!schema) return [];
  // one source for the editor's life with this schema: the completion state knows a source by its identity
  const data = [{ autocomplete: schemaCompletion(schema, format) }];
  return EditorState.languageData.of(() => data);
}

/** The diagnostics of `problems` in `state` (lines past the end land on the last one). */
export function diagnosticsFor(state: EditorState, problems: readonly LineProblem[]): Diagnostic[] {
  return problems.map(({ line, message }) => {
    const at = state.doc.line(Math.min(Math.max(1, line), state.doc.lines));
    return { from: at.from, to: at.to, severity: "error", message };
  });
}

/** The data of a definition's text as far as it can be read (for the schema's choice of a step's type). */
function dataOf(text: string): unknown {
  try {
    return parseDocument(text).toJS();
  } catch {
    return undefined;
  }
}

/** Completion options: fields (sorted by name), or a field's values in the schema's order. */
const options = (offers: Offer[], quote: boolean, field: boolean, apply?: (label: string) => string) =>
  offers.map((o, i) => ({
    label: quote ? `"${o.label}"` : o.label,
    apply: apply?.(o.label),
    detail: o.detail,
    info: o.info,
    type: field ? "property" : "enum",
    boost: field ? undefined : -Math.min(i, 99),
  }));

/** Where the cursor is in a JSON definition: from the syntax tree (a key being typed, or a value). */
function jsonContext(context: CompletionContext): { path: Path; key?: string; from: number; written: string[] } | null {
  const tree = syntaxTree(context.state);
  const node = tree.resolveInner(context.pos, -1);
  const text = (from: number, to: number) => context.state.doc.sliceString(from, to);
  const nameOf = (property: typeof node) => {
    const name = property.getChild("PropertyName");
    return name ? text(name.from, name.to).replace(/^"|"$/g, "") : "";
  };
  const pathOf = (start: typeof node | null): Path => {
    const path: Path = [];
    for (let n = start; n; n = n.parent) {
      const parent = n.parent;
      if (parent?.name === "Property") path.unshift(nameOf(parent));
      else if (parent?.name === "Array") {
        let index = 0;
        for (let c = parent.firstChild; c && c.from < n.from; c = c.nextSibling) if (!"[],".includes(c.name)) index += 1;
        path.unshift(index);
      }
    }
    return path.filter((p) => p !== "");
  };
  const keysOf = (object: typeof node) =>
    object.getChildren("Property").map((p) => nameOf(p)).filter(Boolean);
  if (node.name === "PropertyName" && node.parent?.parent?.name === "Object") {
    const object = node.parent.parent;
    return { path: pathOf(object), from: node.from, written: keysOf(object) };
  }
  if (node.name === "String" && node.parent?.name === "Property" && node.parent.getChild("PropertyName") !== node) {
    const object = node.parent.parent;
    return object ? { path: [...pathOf(object), nameOf(node.parent)], key: nameOf(node.parent), from: node.from, written: [] } : null;
  }
  if (node.name === "Object" || (node.name === "⚠" && node.parent?.name === "Object")) {
    const object = node.name === "Object" ? node : (node.parent as typeof node);
    return { path: pathOf(object), from: context.pos, written: keysOf(object) };
  }
  return null;
}

/** Completion from the definition format's schema: the fields of the mapping the cursor is in, a field's values. */
export function schemaCompletion(schema: JsonSchema, format: SourceFormat) {
  return (context: CompletionContext): CompletionResult | null => {
    const text = context.state.doc.toString();
    // the line being typed is rarely valid yet: the definition is read without it (a step's type is its type)
    const line = context.state.doc.lineAt(context.pos);
    const data = dataOf(text.slice(0, line.from) + text.slice(line.to));
    if (format === "yaml") {
      const at = yamlContext(text, context.pos);
      if (!at || (!context.explicit && at.prefix === "" && at.key === undefined)) return null;
      const offers = at.key !== undefined ? valuesAt(schema, data, [...at.path, at.key]) : fieldsAt(schema, data, at.path, at.written);
      if (offers.length === 0) return null;
      return {
        from: at.from,
        options: options(offers, false, at.key === undefined, at.key === undefined ? (label) => `${label}: ` : undefined),
        validFor: /^[\w-]*$/,
      };
    }
    const at = jsonContext(context);
    if (!at) return null;
    const offers = at.key !== undefined ? valuesAt(schema, data, at.path) : fieldsAt(schema, data, at.path, at.written);
    if (offers.length === 0) return null;
    return {
      from: at.from,
      options: options(offers, true, at.key === undefined, at.key === undefined ? (l) => `"${l}": ` : (l) => `"${l}"`),
    };
  };
}

/**
 * CodeMirror 6 for a workflow definition, in YAML or JSON mode. `problems` (the server's validation errors, placed
 * on their lines) show in the gutter and under the line. With `schema` (the definition format, GET
 * /api/workflows/schema) it offers the fields and values the format has where the cursor is, and marks what the
 * schema finds wrong while one types, beside the server's problems. Tab indents; Esc then Tab leaves the editor
 * (CodeMirror's own escape from the tab trap), as its label says.
 */
export function CodeEditor({
  id,
  value,
  format,
  problems,
  onChange,
  labelledBy,
  describedBy,
  schema = null,
}: {
  id: string;
  value: string;
  format: SourceFormat;
  problems: readonly LineProblem[];
  onChange: (value: string) => void;
  labelledBy: string;
  describedBy?: string;
  schema?: JsonSchema | null;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const languageSlot = useRef(new Compartment());
  const helpSlot = useRef(new Compartment());
  const serverProblems = useRef(problems);
  const schemaRef = useRef(schema);
  const lintTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const theme = followSystemTheme(() => view.current);
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          keymap.of([indentWithTab]),
          languageSlot.current.of(language(format)),
          helpSlot.current.of(help(schema, format)),
          lintGutter(),
          theme.extension,
          EditorView.contentAttributes.of({
            id,
            "aria-labelledby": labelledBy,
            ...(describedBy ? { "aria-describedby": describedBy } : {}),
            "aria-multiline": "true",
          }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            onChangeRef.current(update.state.doc.toString());
            clearTimeout(lintTimer.current);
            lintTimer.current = setTimeout(() => publishRef.current(), 400);
          }),
        ],
      }),
    });
    view.current = editor;
    publishRef.current();
    return () => {
      clearTimeout(lintTimer.current);
      theme.stop();
      editor.destroy();
      view.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the editor is made once; the effects below keep it in step with the props
  }, []);

  // A new text from outside (a template, a format switch): replace the document.
  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({
      effects: [languageSlot.current.reconfigure(language(format)), helpSlot.current.reconfigure(help(schema, format))],
    });
  }, [format, schema]);

  // The server's problems, and the schema's of the text as it stands, marked together.
  const publishRef = useRef(() => {});
  publishRef.current = () => {
    const editor = view.current;
    if (!editor) return;
    const server = diagnosticsFor(editor.state, serverProblems.current);
    const root = schemaRef.current;
    const length = editor.state.doc.length;
    const own: Diagnostic[] = root
      ? textProblems(root, editor.state.doc.toString()).map(({ from, to, message }) => ({
          from: Math.min(from, length),
          to: Math.min(to, length),
          severity: "error",
          source: "schema",
          message,
        }))
      : [];
    editor.dispatch(setDiagnostics(editor.state, [...server, ...own]));
  };

  useEffect(() => {
    serverProblems.current = problems;
    schemaRef.current = schema;
    publishRef.current();
  }, [problems, schema]);

  return <div ref={host} className="code-editor" data-format={format} />;
}
