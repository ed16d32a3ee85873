import { Dialog } from "../components/Dialog";
import { CONTROL_SHORTCUTS } from "../control/ExecutionControls";
import { Link } from "react-router-dom";
import { APPROVAL_ACTIONS, DECISION_ACTIONS, OTHER_SHORTCUTS } from "./decisions";
import { keyLabel, useShortcutMode } from "./shortcutPreference";

const MODE_TEXT = {
  single: "Character keys work alone.",
  alt: "Character keys work with Alt held (Alt+a, Alt+r…).",
  off: "Character-key shortcuts are off: use the buttons; Enter, Esc and the arrows still work.",
} as const;

/** The `?` sheet: every key of the panel, the execution page and the queue, and what it does. */
export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const rows = [...DECISION_ACTIONS, ...CONTROL_SHORTCUTS, ...OTHER_SHORTCUTS];
  const mode = useShortcutMode();
  const label = (key: string) => keyLabel(key, mode === "off" ? "single" : mode) ?? key;
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <p className="muted">
        Shortcuts are off while you type in a field and while a dialog is open. {MODE_TEXT[mode]}{" "}
        <Link to="/settings" onClick={onClose}>
          Change in Settings
        </Link>
        .
      </p>
      <table className="table shortcut-sheet">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Action</th>
            <th scope="col">What it does</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <td>
                <kbd>{label(row.key)}</kbd>
              </td>
              <th scope="row">{row.label}</th>
              <td>{row.help}</td>
            </tr>
          ))}
          <tr>
            <td>
              <kbd>{label("j")}</kbd> / <kbd>{label("k")}</kbd>
            </td>
            <th scope="row">Queue: move</th>
            <td>On the queue: select the next / previous approval, question or suggestion; Enter opens it.</td>
          </tr>
          <tr>
            <td>
              <kbd>{label("i")}</kbd>
            </td>
            <th scope="row">Queue: answer</th>
            <td>On a selected question (a human input or a clarification): open its answer; Enter sends it.</td>
          </tr>
          <tr>
            <td>
              <kbd>{label("/")}</kbd>
            </td>
            <th scope="row">Queue: search</th>
            <td>Move to the queue's search field (workflow, step, tool, the run's variables); Esc leaves it.</td>
          </tr>
          <tr>
            <td>
              <kbd>{label("a")}</kbd>
            </td>
            <th scope="row">Queue: accept</th>
            <td>
              On a selected suggestion: accept it, as its coaching panel would (a risky call: Enter confirms it). To
              reject or correct it, Enter opens its panel.
            </td>
          </tr>
          {APPROVAL_ACTIONS.map((row) => (
            <tr key={`approval-${row.key}`}>
              <td>
                <kbd>{label(row.key)}</kbd>
              </td>
              <th scope="row">Approval: {row.label}</th>
              <td>{row.help}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
