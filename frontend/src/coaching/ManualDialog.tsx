import { useId, useState, type FormEvent } from "react";
import { Dialog } from "./Dialog";
import type { Suggestion } from "./types";

type Format = "json" | "text";

/** The manual output as it will be sent, or the reason it cannot be. */
export function parseManualOutput(text: string, format: Format): { value: unknown } | { error: string } {
  if (format === "text") return { value: text };
  if (!text.trim()) return { value: null };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** `m`: the operator did the step by hand; asks for its output (JSON or text). */
export function ManualDialog({
  suggestion,
  sending,
  onSubmit,
  onClose,
}: {
  suggestion: Suggestion;
  sending: boolean;
  onSubmit: (output: unknown) => void;
  onClose: () => void;
}) {
  const [text, setText] = useState("");
  const [format, setFormat] = useState<Format>("json");
  const [error, setError] = useState<string | null>(null);
  const hintId = useId();
  const errorId = useId();

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const parsed = parseManualOutput(text, format);
    if ("error" in parsed) {
      setError(parsed.error);
      return;
    }
    onSubmit(parsed.value);
  };

  return (
    <Dialog title={`Done by hand: ${suggestion.step_name || suggestion.step_id}`} onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="manual-output">Output of the step</label>
          <p id={hintId} className="muted field__hint">
            Becomes the step's output; later steps can read it. Empty JSON sends no output. Ctrl+Enter sends.
          </p>
          <textarea
            id="manual-output"
            className="mono"
            rows={6}
            value={text}
            aria-describedby={error ? `${hintId} ${errorId}` : hintId}
            aria-invalid={error ? true : undefined}
            onChange={(e) => {
              setText(e.target.value);
              setError(null);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
            }}
          />
          {error ? (
            <p id={errorId} className="field__error" role="alert">
              ✕ {error}
            </p>
          ) : null}
        </div>
        <fieldset className="radio-group">
          <legend>Read the output as</legend>
          {(["json", "text"] as const).map((value) => (
            <label key={value}>
              <input
                type="radio"
                name="manual-format"
                value={value}
                checked={format === value}
                onChange={() => {
                  setFormat(value);
                  setError(null);
                }}
              />{" "}
              {value === "json" ? "JSON" : "Plain text"}
            </label>
          ))}
        </fieldset>
        <div className="dialog__actions">
          <button type="submit" className="button" disabled={sending}>
            {sending ? "Sending…" : "Record manual result"}
          </button>
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
