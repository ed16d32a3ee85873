import { useMediaQuery } from "../hooks";
import { CONFIRM_KEY } from "./confirmation";

/** Whether the main pointer is a finger (a phone, a tablet): no Enter or Esc key to press there. */
export const useTouchScreen = () => useMediaQuery("(pointer: coarse)");

/**
 * What a risky decision waiting for its confirming key says (confirmation.ts): the prompt, and how to cancel it. On a
 * touch screen it says to tap Confirm (the button below; tapping the armed decision again does the same) instead of
 * pressing Enter, and offers no Esc.
 */
export function ConfirmPrompt({ prompt, onCancel, onConfirm }: { prompt: string; onCancel?: () => void; onConfirm?: () => void }) {
  const touch = useTouchScreen();
  const shown = touch && onConfirm ? prompt.replace(`Press ${CONFIRM_KEY} to `, "Tap Confirm to ") : prompt;
  return (
    <div id="confirm-prompt" className="notice notice--warning confirm-prompt" role="alert" data-testid="confirm-prompt">
      <strong>{shown}</strong>{" "}
      {touch ? "Tap Cancel to keep it undecided; it lapses in a few seconds." : <><kbd>Esc</kbd> cancels; it lapses in a few seconds.</>}
      {onConfirm ? (
        <button type="button" className="button" onClick={onConfirm}>
          Confirm{touch ? null : <> <kbd>{CONFIRM_KEY}</kbd></>}
        </button>
      ) : null}
      {onCancel ? (
        <button type="button" className="button button--secondary" onClick={onCancel}>
          Cancel{touch ? null : <> <kbd>Esc</kbd></>}
        </button>
      ) : null}
    </div>
  );
}
