import { useState } from "react";
import { MAX_BODY_BYTES, formatMegabytes, jsonBytes } from "../api/client";
import { TextDialog, type DecisionDialogProps } from "./TextDialog";

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

/** Why `value` cannot be sent as a manual output (too large for the server), or null. */
export function manualOutputTooLarge(value: unknown, limit: number = MAX_BODY_BYTES): string | null {
  const size = jsonBytes({ decision: "manual", manual_output: value, suggestion_id: "x".repeat(64) });
  if (size <= limit) return null;
  return `Too large to send: ${formatMegabytes(size)}, the server takes at most ${formatMegabytes(limit)}. ` +
    "Shorten it (or store it elsewhere and give where); your text is kept.";
}

/** `m`: the operator did the step by hand; asks for its output (JSON or text). */
export function ManualDialog({
  suggestion,
  sending,
  onSubmit,
  onClose,
  refused,
}: DecisionDialogProps<unknown>) {
  const [text, setText] = useState("");
  const [format, setFormat] = useState<Format>("json");
  const [error, setError] = useState<string | null>(null);

  const send = () => {
    const parsed = parseManualOutput(text, format);
    if ("error" in parsed) {
      setError(parsed.error);
      return;
    }
    // checked here: an 11 MB output would upload for seconds only to be refused (413)
    const tooLarge = manualOutputTooLarge(parsed.value);
    if (tooLarge) {
      setError(tooLarge);
      return;
    }
    onSubmit(parsed.value);
  };

  return (
    <TextDialog
      title={`Done by hand: ${suggestion.step_name || suggestion.step_id}`}
      onClose={onClose}
      onSend={send}
      fieldId="manual-output"
      label="Output of the step"
      hint="Becomes the step's output; later steps can read it. Empty JSON sends no output. Ctrl+Enter sends."
      rows={6}
      mono
      value={text}
      onChange={(value) => {
        setText(value);
        setError(null);
      }}
      error={error ?? refused ?? null}
      sendLabel="Record manual result"
      sendingLabel="Sending…"
      sending={sending}
    >
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
    </TextDialog>
  );
}
