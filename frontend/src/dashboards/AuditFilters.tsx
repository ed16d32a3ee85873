import { useId, useState, type FormEvent } from "react";
import { fromLocalInput, toLocalInput } from "../format";
import { useAuditActions } from "./queries";

export interface AuditFilterValues {
  user: string;
  execution_id: string;
  action: string;
  /** ISO instant, UTC. */
  since: string;
}

export const NO_FILTERS: AuditFilterValues = { user: "", execution_id: "", action: "", since: "" };


/** The server's actions; one asked for in the address stays choosable while they load. */
function actionChoices(known: string[] | undefined, current: string): string[] {
  const list = known ?? [];
  return current && !list.includes(current) ? [...list, current] : list;
}

export function actionLabel(action: string): string {
  const words = action.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** User, execution, action and "since" filters; applied on submit, cleared at once. */
export function AuditFilters({ value, onApply }: { value: AuditFilterValues; onApply: (v: AuditFilterValues) => void }) {
  const [draft, setDraft] = useState({ ...value, since: toLocalInput(value.since || null) });
  const actions = useAuditActions();
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
          {actionChoices(actions.data?.actions, draft.action).map((a) => (
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
