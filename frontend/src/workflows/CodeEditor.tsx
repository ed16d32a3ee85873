import { json } from "@codemirror/lang-json";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { indentWithTab } from "@codemirror/commands";
import { useEffect, useRef } from "react";
import { followSystemTheme } from "./editorTheme";

export type SourceFormat = "yaml" | "json";

/** A problem to mark in the editor: its 1-based line and the message. */
export interface LineProblem {
  line: number;
  message: string;
}

const language = (format: SourceFormat) => (format === "yaml" ? yaml() : json());

/** The diagnostics of `problems` in `state` (lines past the end land on the last one). */
export function diagnosticsFor(state: EditorState, problems: readonly LineProblem[]): Diagnostic[] {
  return problems.map(({ line, message }) => {
    const at = state.doc.line(Math.min(Math.max(1, line), state.doc.lines));
    return { from: at.from, to: at.to, severity: "error", message };
  });
}

/**
 * CodeMirror 6 for a workflow definition, in YAML or JSON mode. `problems` (the server's validation errors, placed
 * on their lines) show in the gutter and under the line. Tab indents; Esc then Tab leaves the editor (CodeMirror's
 * own escape from the tab trap), as its label says.
 */
export function CodeEditor({
  id,
  value,
  format,
  problems,
  onChange,
  labelledBy,
  describedBy,
}: {
  id: string;
  value: string;
  format: SourceFormat;
  problems: readonly LineProblem[];
  onChange: (value: string) => void;
  labelledBy: string;
  describedBy?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const languageSlot = useRef(new Compartment());
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
          lintGutter(),
          theme.extension,
          EditorView.contentAttributes.of({
            id,
            "aria-labelledby": labelledBy,
            ...(describedBy ? { "aria-describedby": describedBy } : {}),
            "aria-multiline": "true",
          }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
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
    view.current?.dispatch({ effects: languageSlot.current.reconfigure(language(format)) });
  }, [format]);

  useEffect(() => {
    const editor = view.current;
    if (editor) editor.dispatch(setDiagnostics(editor.state, diagnosticsFor(editor.state, problems)));
  }, [problems]);

  return <div ref={host} className="code-editor" data-format={format} />;
}
