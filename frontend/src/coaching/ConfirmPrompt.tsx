/** What a risky decision waiting for its confirming key says (confirmation.ts): the prompt, and how to cancel it. */
export function ConfirmPrompt({ prompt, onCancel }: { prompt: string; onCancel?: () => void }) {
  return (
    <div id="confirm-prompt" className="notice notice--warning confirm-prompt" role="alert" data-testid="confirm-prompt">
      <strong>{prompt}</strong> <kbd>Esc</kbd> cancels; it lapses in a few seconds.
      {onCancel ? (
        <button type="button" className="button button--secondary" onClick={onCancel}>
          Cancel <kbd>Esc</kbd>
        </button>
      ) : null}
    </div>
  );
}
