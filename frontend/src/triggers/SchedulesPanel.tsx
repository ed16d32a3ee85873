import { useId, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ListStatus, ListTable } from "../components/ListTable";
import { ConfirmMutation } from "../dashboards/ConfirmDialog";
import { formatDateTime } from "../format";
import {
  exampleBody,
  useChangeSchedule,
  useCreateSchedule,
  useDeleteSchedule,
  useSchedulePreview,
  useSchedules,
  type Schedule,
} from "./api";
import { FormProblems } from "./FormProblems";
import { parseObject, problems, type TriggerProps as Props } from "./forms";
import { FailureNotice } from "../components/QueryState";
import { DialogButton } from "../components/DialogButton";

const ZONES: readonly string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  } catch {
    return [];
  }
})();

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** A workflow's cron schedules (with a time zone): made, previewed, paused, changed, deleted. */
export function SchedulesPanel({ workflowId, variables, lead }: Props) {
  const ids = { name: useId(), cron: useId(), zone: useId(), vars: useId(), zones: useId(), preview: useId() };
  const [name, setName] = useState("");
  const [cron, setCron] = useState("0 9 * * MON-FRI");
  const [timezone, setTimezone] = useState(browserZone);
  const [vars, setVars] = useState(() => {
    const body = exampleBody(variables);
    return body === "{}" ? "" : body;
  });
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const schedules = useSchedules(workflowId);
  const preview = useSchedulePreview(workflowId, lead ? cron : "", timezone);
  const create = useCreateSchedule(workflowId);
  const change = useChangeSchedule(workflowId);
  const remove = useDeleteSchedule(workflowId);
  const parsedVars = parseObject(vars);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (create.isPending || !name.trim() || !parsedVars.value) return;
    create.mutate({ name: name.trim(), cron, timezone, variables: parsedVars.value }, {
      onSuccess: () => setName(""),
    });
  };
  const items = schedules.data?.items ?? [];

  return (
    <div className="triggers__panel">
      <h3 id="schedules-heading">Schedules</h3>
      {lead ? (
        <form className="form admin__invite" onSubmit={submit} aria-label="Create a schedule">
          <div className="field">
            <label htmlFor={ids.name}>Schedule name</label>
            <input id={ids.name} type="text" value={name} maxLength={100} placeholder="e.g. weekday mornings"
              onChange={(e) => setName(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.cron}>Cron expression</label>
            <input id={ids.cron} type="text" className="mono" value={cron} maxLength={200} aria-describedby={ids.preview}
              onChange={(e) => setCron(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.zone}>Time zone</label>
            <input id={ids.zone} type="text" value={timezone} list={ids.zones} maxLength={64}
              onChange={(e) => setTimezone(e.target.value)} />
            <datalist id={ids.zones}>
              {ZONES.map((z) => <option key={z} value={z} />)}
            </datalist>
          </div>
          <div className="field">
            <label htmlFor={ids.vars}>Variables (JSON)</label>
            <input id={ids.vars} type="text" className="mono" value={vars} placeholder="{}"
              onChange={(e) => setVars(e.target.value)} />
          </div>
          <button type="submit" className="button" disabled={create.isPending || !name.trim() || !parsedVars.value}>
            {create.isPending ? "Creating…" : "Create schedule"}
          </button>
          <div id={ids.preview} className="triggers__preview" aria-live="polite">
            {preview.isError ? (
              <p className="notice notice--error">{problems(preview.error)}</p>
            ) : preview.data ? (
              <p className="muted">
                {preview.data.description} ({preview.data.timezone}); next:{" "}
                {preview.data.next_fire_times.slice(0, 3).map(formatDateTime).join(", ")}
              </p>
            ) : null}
          </div>
          <FormProblems field="Variables" problem={parsedVars.problem} create={create} />
        </form>
      ) : null}
      <p className="muted">
        Five fields: minute, hour, day of month, month, day of week, read in the schedule's time zone. Each fire
        starts one execution, whichever server scans first; fires missed while no server ran happen once at the next
        start.
      </p>

      <ListStatus query={schedules} count={items.length} loading="Loading schedules…"
        failed="The schedules could not be loaded" empty="No schedules yet." />
      {items.length > 0 ? (
        <ListTable labelledBy="schedules-heading" caption="Schedules" actions
          columns={["Schedule", "Rule", "Next fires", "Last fire", "Status"]}>
          {items.map((s) => (
            <tr key={s.id} data-schedule={s.name}>
              <th scope="row">{s.name}</th>
              <td>
                <code>{s.cron}</code> <span className="muted">{s.timezone}</span>
                <br />
                <span className="muted">{s.description}</span>
              </td>
              <td>
                {s.next_fire_times.length ? (
                  <ul className="triggers__times">
                    {s.next_fire_times.slice(0, 3).map((t) => <li key={t}>{formatDateTime(t)}</li>)}
                  </ul>
                ) : "—"}
              </td>
              <td>
                {s.last_fired_at ? formatDateTime(s.last_fired_at) : "never"}
                {s.last_execution_id ? (
                  <> · <Link to={`/executions/${encodeURIComponent(s.last_execution_id)}`}>execution</Link></>
                ) : null}
                {s.last_error ? <p className="notice notice--error">{s.last_error}</p> : null}
              </td>
              <td>{s.enabled ? "enabled" : "disabled"}</td>
              <td className="actions">
                {lead ? (
                  <>
                    <button type="button" className="button button--secondary button--small"
                      aria-label={`${s.enabled ? "Disable" : "Enable"} schedule ${s.name}`}
                      disabled={change.isPending}
                      onClick={() => change.mutate({ id: s.id, enabled: !s.enabled })}>
                      {s.enabled ? "Disable" : "Enable"}
                    </button>{" "}
                    <DialogButton className="button button--danger button--small" label={`Delete schedule ${s.name}`}
                      onOpen={() => { remove.reset(); setDeleting(s); }}>
                      Delete
                    </DialogButton>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      <FailureNotice mutation={change} what="Not changed" describe={problems} />
      {deleting ? (
        <ConfirmMutation title={`Delete schedule “${deleting.name}”?`} confirmLabel="Delete schedule" mutation={remove}
          variables={deleting.id} failure="Not deleted" onClose={() => setDeleting(null)}>
          <p>It fires no more; executions it started go on and still say they came from it.</p>
        </ConfirmMutation>
      ) : null}
    </div>
  );
}
