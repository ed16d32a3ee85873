import type { Armed } from "./confirmation";
import { ConfirmPrompt } from "./ConfirmPrompt";
import { DecisionBar } from "./DecisionBar";
import { SuggestionCard } from "./SuggestionCard";
import type { DecisionKind, Suggestion } from "./types";

/** The suggestion the operator decides: the card, the decision bar, and what waits (a confirming key, the answer). */
export function SuggestionView({
  suggestion,
  paused,
  sending,
  confirming,
  pauseBusy,
  canPause,
  onDecide,
  onCancelConfirm,
  onConfirm,
  onTogglePause,
  onHelp,
}: {
  suggestion: Suggestion;
  paused: boolean;
  /** The decision has been on its way for a while. */
  sending: boolean;
  /** The decision waiting for its confirming key, if any. */
  confirming: Armed<DecisionKind> | null;
  pauseBusy: boolean;
  canPause: boolean;
  onDecide: (kind: DecisionKind) => void;
  onCancelConfirm: () => void;
  /** sends the armed decision (what Enter does) */
  onConfirm?: () => void;
  onTogglePause: () => void;
  onHelp: () => void;
}) {
  return (
    <>
      {paused ? (
        <p className="notice notice--warning">
          <strong>‖ Paused.</strong> Decisions are off until you resume the session (p).
        </p>
      ) : null}
      <SuggestionCard suggestion={suggestion} />
      <DecisionBar
        suggestion={suggestion}
        paused={paused}
        busy={sending}
        armed={confirming?.target === suggestion.suggestion_id ? confirming.action : null}
        pauseBusy={pauseBusy}
        canPause={canPause}
        onDecide={onDecide}
        onTogglePause={onTogglePause}
        onHelp={onHelp}
      />
      {confirming ? <ConfirmPrompt prompt={confirming.prompt} onCancel={onCancelConfirm} onConfirm={onConfirm} /> : null}
      {sending ? (
        // not a live region: the announcer says the decision once it is applied
        <p className="muted">
          Sending the decision…
        </p>
      ) : null}
    </>
  );
}
