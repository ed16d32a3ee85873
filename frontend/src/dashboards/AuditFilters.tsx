import { useId, useState, type FormEvent } from "react";
import { fromLocalInput, toLocalInput } from "./format";

export interface AuditFilterValues {
  user: string;
  execution_id: string;
  action: string;
  /** ISO instant, UTC. */
  since: string;
}

export const NO_FILTERS: AuditFilterValues = { user: "", execution_id: "", action: "", since: "" };

/** The actions the server records (services/audit.py ACTIONS). */
export const AUDIT_ACTIONS = [
  "login",
  "login_failed",
  "decision",
  "correction",
  "promotion",
  "demotion",
  "pause",
  "resume",
  "cancel",
  "pack_change",
  "pack_import",
  "thresholds_change",
  "workflow_create",
  "workflow_update",
  "workflow_delete",
  "token_create",
  "token_revoke",
  "user_change",
] as const;

export function actionLabel(action: string): string {
  const words = action.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** User, execution, action and "since" filters; applied on submit, cleared at once. */
export function AuditFilters({ value, onApply }: { value: AuditFilterValues; onApply: (v: AuditFilterValues) => void }) {
  const [draft, setDraft] = useState({ ...value, since: toLocalInput(value.since || null) });
  const id = useId();
  const set = (key: keyof AuditFilterValues) => (event: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: event.target.value }));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    onApply({
      user: draft.user.trim(),
      execution_id: draft.execution_id.trim(),
      action: draft.action,
      since: fromLocalInput(draft.since) ?? "",
    });
  };

  const clear = () => {
    setDraft(NO_FILTERS);
    onApply(NO_FILTERS);
  };

  return (
    <form className="filters" onSubmit={onSubmit} aria-label="Filter the audit log" role="search">
      <div className="field">
        <label htmlFor={`${id}-user`}>User</label>
        <input id={`${id}-user`} value={draft.user} onChange={set("user")} placeholder="name@example.com or system" autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor={`${id}-execution`}>Execution</label>
        <input id={`${id}-execution`} value={draft.execution_id} onChange={set("execution_id")} placeholder="execution id" autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor={`${id}-action`}>Action</label>
        <select id={`${id}-action`} value={draft.action} onChange={set("action")}>
          <option value="">Any action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {actionLabel(a)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-since`}>Since</label>
        <input id={`${id}-since`} type="datetime-local" value={draft.since} onChange={set("since")} />
      </div>
      <div className="filters__actions">
        <button type="submit" className="button">
          Apply filters
        </button>
        <button type="button" className="button button--secondary" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}
