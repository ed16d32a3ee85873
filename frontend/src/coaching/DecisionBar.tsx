import { CONFIRM_KEY, needsConfirmation } from "./confirmation";
import { DECISION_ACTIONS, unavailableReason } from "./decisions";
import type { DecisionKind, Suggestion } from "./types";

/**
 * The five decision buttons, pause/resume and the shortcut sheet, each with its key shown. A risky decision's
 * button says it takes a confirming key; the armed one reads "Confirm accept Enter" and a click on it confirms.
 */
export function DecisionBar({
  suggestion,
  paused,
  busy,
  armed = null,
  pauseBusy,
  canPause,
  onDecide,
  onTogglePause,
  onHelp,
}: {
  suggestion: Suggestion | null;
  paused: boolean;
  busy: boolean;
  /** The decision waiting for its confirming key. */
  armed?: DecisionKind | null;
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
        const confirms = reason === null && needsConfirmation(action.kind, suggestion);
        const isArmed = confirms && armed === action.kind;
        return (
          <button
            key={action.kind}
            type="button"
            className={`button decision-bar__button decision-bar__button--${action.kind}${isArmed ? " decision-bar__button--armed" : ""}`}
            aria-keyshortcuts={isArmed ? CONFIRM_KEY : action.key}
            disabled={busy || reason !== null}
            title={reason ?? (confirms ? `${action.help} Risky: press ${action.key}, then ${CONFIRM_KEY} to confirm.` : action.help)}
            onClick={() => onDecide(action.kind)}
          >
            {isArmed ? (
              <>
                Confirm {action.label.toLowerCase()} <kbd>{CONFIRM_KEY}</kbd>
              </>
            ) : confirms ? (
              <>
                {action.label} <kbd>{action.key}</kbd> <span className="decision-bar__then">then</span> <kbd>{CONFIRM_KEY}</kbd>
              </>
            ) : (
              <>
                {action.label} <kbd>{action.key}</kbd>
              </>
            )}
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
