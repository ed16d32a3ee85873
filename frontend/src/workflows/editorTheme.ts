/** CodeMirror's colours for the app's theme: its light default, or One Dark when the system is dark. */
import { Compartment, type Extension } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { oneDark } from "@codemirror/theme-one-dark";

const DARK = "(prefers-color-scheme: dark)";

export const prefersDark = (): boolean =>
  typeof window !== "undefined" && typeof window.matchMedia === "function" && window.matchMedia(DARK).matches;

export const themeFor = (dark: boolean): Extension => (dark ? oneDark : []);

/**
 * The theme as an extension in its own compartment, switched when the system setting changes while the editor
 * is open. Returns the extension and a function that stops listening.
 */
export function followSystemTheme(view: () => EditorView | null): { extension: Extension; stop: () => void } {
  const slot = new Compartment();
  if (typeof window === "undefined" || typeof window.matchMedia !== "function") {
    return { extension: slot.of([]), stop: () => {} };
  }
  const query = window.matchMedia(DARK);
  const onChange = () => view()?.dispatch({ effects: slot.reconfigure(themeFor(query.matches)) });
  query.addEventListener?.("change", onChange);
  return { extension: slot.of(themeFor(query.matches)), stop: () => query.removeEventListener?.("change", onChange) };
}
