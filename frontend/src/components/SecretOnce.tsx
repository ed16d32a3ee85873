import { useEffect, useState, type ReactNode } from "react";
import { formatDateTime } from "../format";
import { DialogButton } from "./DialogButton";
import "../admin/admin.css"; // .token-once: the box's layout

/**
 * A secret (API token, agent token, signing secret) shown once, right after it is made: the field selects its
 * text on focus, Copy puts it on the clipboard, "Done, hide it" drops it for good.
 */
export function SecretOnce({
  id,
  title,
  label,
  value,
  copyLabel = "Copy",
  onDone,
  children,
  actions,
}: {
  /** The field's id; the title's is `${id}-title`. */
  id: string;
  title: ReactNode;
  /** The field's (visually hidden) label. */
  label: string;
  value: string;
  copyLabel?: string;
  onDone: () => void;
  /** How to use it, between the field and the buttons. */
  children?: ReactNode;
  /** More buttons, between Copy and Done. */
  actions?: ReactNode;
}) {
  return (
    <div className="notice notice--info token-once" role="status" aria-labelledby={`${id}-title`}>
      <p id={`${id}-title`} className="notice__title">
        {title}
      </p>
      <label htmlFor={id} className="visually-hidden">
        {label}
      </label>
      <input id={id} className="mono token-once__value" readOnly value={value} onFocus={(e) => e.target.select()} />
      {children}
      <div className="token-once__actions">
        <CopyButton text={value} label={copyLabel} />
        {actions}
        <button type="button" className="button button--secondary" onClick={onDone}>
          Done, hide it
        </button>
      </div>
    </div>
  );
}

/**
 * Puts `text` on the clipboard, and says so: "Copied" on the button (announced) for a few seconds, or why not (a
 * browser without clipboard access: select the text and copy it).
 */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = window.setTimeout(() => setState("idle"), 4000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = () => {
    const clipboard = navigator.clipboard;
    if (!clipboard) {
      setState("failed");
      return;
    }
    clipboard.writeText(text).then(
      () => setState("copied"),
      () => setState("failed"),
    );
  };
  return (
    <>
      <button type="button" className="button button--secondary" onClick={copy}>
        {state === "copied" ? `✓ Copied` : label}
      </button>
      <span className={state === "failed" ? "field__error" : "visually-hidden"} aria-live="polite">
        {state === "copied" ? `${label}: copied to the clipboard.` : state === "failed" ? "Could not copy: select the text and copy it." : ""}
      </span>
    </>
  );
}

/** A listed credential's (agent, webhook) Created, Last used and Status cells. */
export function CredentialCells({
  item,
}: {
  item: { created_at: string; created_by: string; last_used_at?: string | null; active: boolean; revoked_at?: string | null };
}) {
  return (
    <>
      <td>
        {formatDateTime(item.created_at)} <span className="muted">by {item.created_by}</span>
      </td>
      <td>{item.last_used_at ? formatDateTime(item.last_used_at) : "never"}</td>
      <td>{item.active ? "active" : `revoked ${formatDateTime(item.revoked_at ?? "")}`}</td>
    </>
  );
}

/** A listed credential's actions cell: its Revoke button (opening the confirmation) while it may be revoked. */
export function RevokeCell({ shown, label, onRevoke }: { shown: boolean; label: string; onRevoke: () => void }) {
  return (
    <td className="actions">
      {shown ? (
        <DialogButton className="button button--danger button--small" label={label} onOpen={onRevoke}>
          Revoke
        </DialogButton>
      ) : null}
    </td>
  );
}
