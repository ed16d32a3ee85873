import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../api/client";
import { Dialog } from "../components/Dialog";
import { formatJson, isPlainObject } from "../format";
import type { Approval } from "./types";

/** The server's 422 details as "field: message" lines (`params.path`, `params`, `decision`…). */
export function fieldErrors(error: unknown): { field: string; message: string }[] {
  if (!(error instanceof ApiError) || error.status !== 422 || !isPlainObject(error.details)) return [];
  const details = (isPlainObject(error.details.json) ? error.details.json : error.details) as Record<string, unknown>;
  return Object.entries(details).map(([field, value]) => ({
    field,
    message: Array.isArray(value) ? value.map(String).join(" ") : typeof value === "string" ? value : formatJson(value),
  }));
}

/**
 * `e` on a tool call's approval: edit the params the tool will run with (raw JSON, checked to be an object here;
 * the tool's schema and the policy are checked by the server, whose 422 names the fields), with a comment.
 * An edit counts as its author's approval.
 */
export function EditParamsDialog({
  approval,
  sending,
  serverError,
  onSubmit,
  onClose,
}: {
  approval: Approval;
  sending: boolean;
  serverError: unknown;
  onSubmit: (params: Record<string, unknown>, comment: string) => void;
  onClose: () => void;
}) {
  const id = useId();
  // a gateway call whose tool has accepted learned rules starts from their suggested edit
  const [text, setText] = useState(() => formatJson(approval.policy?.learned?.params ?? approval.params ?? {}));
  const [comment, setComment] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const server = fieldErrors(serverError);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setProblem(`Not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (!isPlainObject(parsed)) {
      setProblem("The params must be a JSON object ({…}).");
      return;
    }
    setProblem(null);
    onSubmit(parsed, comment.trim());
  };

  const errorIds = [problem ? `${id}-problem` : "", server.length ? `${id}-server` : ""].filter(Boolean).join(" ");
  return (
    <Dialog title={`Edit the params of ${approval.tool ?? "the call"}`} onClose={onClose} wide>
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-params`}>Params (JSON)</label>
          <p id={`${id}-hint`} className="muted field__hint">
            The tool runs with these params once approved; your edit counts as your approval, and approvals given
            before it no longer count. Ctrl+Enter sends.
          </p>
          <textarea
            id={`${id}-params`}
            className="mono"
            rows={12}
            value={text}
            spellCheck={false}
            aria-describedby={`${id}-hint${errorIds ? ` ${errorIds}` : ""}`}
            aria-invalid={problem || server.length ? true : undefined}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
            }}
          />
          {problem ? (
            <p id={`${id}-problem`} className="field__error" role="alert">
              ✕ {problem}
            </p>
          ) : null}
          {server.length ? (
            <div id={`${id}-server`} role="alert" className="field__error">
              <p>✕ The server refused these params:</p>
              <ul data-testid="edit-errors">
                {server.map((e) => (
                  <li key={e.field}>
                    <span className="mono">{e.field}</span>: {e.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </div>
        <div className="field">
          <label htmlFor={`${id}-comment`}>Comment (optional)</label>
          <input id={`${id}-comment`} type="text" value={comment} onChange={(e) => setComment(e.target.value)} />
        </div>
        <div className="dialog__actions">
          <button type="submit" className="button" disabled={sending}>
            {sending ? "Sending…" : "Approve with these params"}
          </button>
          <button type="button" className="button button--secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
