import { DECISION_ACTIONS, unavailableReason } from "./decisions";
import type { DecisionKind, Suggestion } from "./types";

/** The five decision buttons, pause/resume and the shortcut sheet, each with its key shown. */
export function DecisionBar({
  suggestion,
  paused,
  busy,
  pauseBusy,
  canPause,
  onDecide,
  onTogglePause,
  onHelp,
}: {
  suggestion: Suggestion | null;
  paused: boolean;
  busy: boolean;
  pauseBusy: boolean;
  canPause: boolean;
  onDecide: (kind: DecisionKind) => void;
  onTogglePause: () => void;
  onHelp: () => void;
}) {
  return (
    <div className="decision-bar" role="group" aria-label="Decisions">
      {DECISION_ACTIONS.map((action) => {
        const reason = unavailableReason(action.kind, suggestion, paused);
        return (
          <button
            key={action.kind}
            type="button"
            className={`button decision-bar__button decision-bar__button--${action.kind}`}
            aria-keyshortcuts={action.key}
            disabled={busy || reason !== null}
            title={reason ?? action.help}
            onClick={() => onDecide(action.kind)}
          >
            {action.label} <kbd>{action.key}</kbd>
          </button>
        );
      })}
      <span className="decision-bar__spacer" />
      {canPause ? (
        <button
          type="button"
          className="button button--secondary"
          aria-keyshortcuts="p"
          disabled={pauseBusy}
          onClick={onTogglePause}
        >
          {paused ? "Resume session" : "Pause session"} <kbd>p</kbd>
        </button>
      ) : null}
      <button type="button" className="button button--secondary" aria-keyshortcuts="Shift+?" onClick={onHelp}>
        Shortcuts <kbd>?</kbd>
      </button>
    </div>
  );
}
