import { useEffect, useState } from "react";
import { keyLabel, useShortcutMode } from "./shortcutPreference";

const VERB: Record<string, string> = {
  accept: "Accepted",
  correct: "Corrected",
  skip: "Skipped",
  reject: "Rejected",
  manual: "Recorded by hand",
  approve: "Approved",
  edit: "Edited and approved",
};

/** Whole seconds left until `deadline` (ISO 8601), never below 0. */
export function secondsLeft(deadline: string | null | undefined, now: number = Date.now()): number {
  if (!deadline) return 0;
  const at = Date.parse(deadline);
  return Number.isNaN(at) ? 0 : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A decision on a risky call held for its undo window (issue #31 item 4, like "undo send"): what was decided, the
 * seconds left before the step runs, and the Undo button (z, or Ctrl+Z). At zero the step is about to run.
 */
export function UndoBar({
  decision,
  stepName,
  deadline,
  operator,
  busy,
  onUndo,
}: {
  decision: string;
  stepName: string;
  deadline: string | null | undefined;
  operator?: string;
  busy: boolean;
  onUndo: () => void;
}) {
  const [left, setLeft] = useState(() => secondsLeft(deadline));
  useEffect(() => {
    setLeft(secondsLeft(deadline));
    const timer = setInterval(() => setLeft(secondsLeft(deadline)), 250);
    return () => clearInterval(timer);
  }, [deadline]);
  const mode = useShortcutMode();
  const key = keyLabel("z", mode);
  const what = `${VERB[decision] ?? decision} ${stepName}`;
  return (
    <div className="notice notice--warning undo-bar" data-testid="undo-bar">
      <p>
        <strong>{what}</strong>
        {operator ? <> by {operator}</> : null}.{" "}
        {left > 0 ? (
          <span role="timer" aria-live="off">
            It acts in {left} s; until then it can be taken back.
          </span>
        ) : (
          <span>It acts now.</span>
        )}
      </p>
      <button type="button" className="button" onClick={onUndo} disabled={busy || left <= 0}>
        {busy ? "Undoing…" : "Undo"} {key ? <kbd>{key}</kbd> : null} <kbd>Ctrl+Z</kbd>
      </button>
    </div>
  );
}
