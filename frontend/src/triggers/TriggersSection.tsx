import { useId, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ApiError, errorMessage } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { formatDateTime } from "../format";
import "../admin/admin.css"; // the shared form row and the secret-shown-once box
import "./triggers.css";
import {
  curlExample,
  exampleBody,
  useChangeSchedule,
  useCreateHook,
  useCreateSchedule,
  useDeleteSchedule,
  useHooks,
  useRevokeHook,
  useSchedulePreview,
  useSchedules,
  type CreatedHook,
  type Hook,
  type Schedule,
} from "./api";

interface Props {
  workflowId: string;
  workflowName: string;
  variables?: Record<string, unknown>;
  lead: boolean;
}

/** Parses a JSON object typed in a form field; undefined (with the reason) when it is not one. */
function parseObject(text: string): { value?: Record<string, unknown>; problem?: string } {
  if (!text.trim()) return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return { value: value as Record<string, unknown> };
    return { problem: "must be a JSON object" };
  } catch (error) {
    return { problem: `not JSON: ${(error as Error).message}` };
  }
}

/** The server's 422 as "field: message" lines. */
function problems(error: unknown): string {
  if (error instanceof ApiError && error.details && typeof error.details === "object") {
    const lines = Object.entries(error.details as Record<string, unknown>).map(
      ([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.join("; ") : String(messages)}`,
    );
    if (lines.length) return lines.join(" · ");
  }
  return errorMessage(error);
}

/** Start the workflow from outside: signed incoming webhooks and cron schedules (docs/triggers.md). */
export function TriggersSection(props: Props) {
  return (
    <section aria-labelledby="triggers-heading" className="triggers">
      <h2 id="triggers-heading">Triggers</h2>
      <p className="muted">
        Start {props.workflowName} from outside: another system POSTs a signed webhook, or a schedule fires. Every
        start is audited with its trigger, and the execution says what started it.
      </p>
      <HooksPanel {...props} />
      <SchedulesPanel {...props} />
    </section>
  );
}

function HooksPanel({ workflowId, variables, lead }: Props) {
  const nameId = useId();
  const mappingId = useId();
  const [name, setName] = useState("");
  const [mapping, setMapping] = useState("");
  const [made, setMade] = useState<CreatedHook | null>(null);
  const [revoking, setRevoking] = useState<Hook | null>(null);
  const hooks = useHooks(workflowId);
  const create = useCreateHook(workflowId);
  const revoke = useRevokeHook(workflowId);
  const parsedMapping = parseObject(mapping);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (create.isPending || !name.trim() || !parsedMapping.value) return;
    create.mutate({ name: name.trim(), mapping: parsedMapping.value as Record<string, string> }, {
      onSuccess: (hook) => {
        setMade(hook);
        setName("");
        setMapping("");
      },
    });
  };
  const items = hooks.data?.items ?? [];

  return (
    <div className="triggers__panel">
      <h3 id="hooks-heading">Incoming webhooks</h3>
      {lead ? (
        <form className="form admin__invite" onSubmit={submit} aria-label="Create a webhook">
          <div className="field">
            <label htmlFor={nameId}>Webhook name</label>
            <input id={nameId} type="text" value={name} maxLength={100} placeholder="e.g. shop orders"
              onChange={(e) => setName(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={mappingId}>Mapping (optional)</label>
            <input id={mappingId} type="text" className="mono" value={mapping} placeholder='{"order_id": "order.id"}'
              aria-invalid={parsedMapping.problem ? true : undefined} onChange={(e) => setMapping(e.target.value)} />
          </div>
          <button type="submit" className="button" disabled={create.isPending || !name.trim() || !parsedMapping.value}>
            {create.isPending ? "Creating…" : "Create webhook"}
          </button>
          {parsedMapping.problem ? <p className="notice notice--error">Mapping {parsedMapping.problem}</p> : null}
          {create.isError ? (
            <p className="notice notice--error" role="alert">Not created: {problems(create.error)}</p>
          ) : null}
        </form>
      ) : null}
      <p className="muted">
        Without a mapping the body's fields are the variables; a mapping reads each variable from a path of the
        body (<code>variable → order.id</code>).
      </p>

      {made ? (
        <div className="notice notice--info token-once" role="status" aria-labelledby="hook-secret-title">
          <p id="hook-secret-title" className="notice__title">
            Webhook “{made.name}” created. Copy its secret now: it is not shown again.
          </p>
          <label htmlFor="hook-secret" className="visually-hidden">The new webhook's secret</label>
          <input id="hook-secret" className="mono token-once__value" readOnly value={made.secret}
            onFocus={(e) => e.target.select()} />
          <p className="muted">
            POST JSON to <code>{made.url}</code>, signed: <code>X-Coach-Signature: sha256=HMAC-SHA256(secret,
            "&lt;timestamp&gt;.&lt;body&gt;")</code> with <code>X-Coach-Timestamp</code> (Unix seconds) and a
            unique <code>X-Coach-Delivery</code> id. For example:
          </p>
          <pre className="mono triggers__example" aria-label="Example request">
            {curlExample(made.url, made.secret, exampleBody(variables))}
          </pre>
          <div className="token-once__actions">
            <button type="button" className="button button--secondary"
              onClick={() => void navigator.clipboard?.writeText(made.secret)}>Copy secret</button>
            <button type="button" className="button button--secondary"
              onClick={() => void navigator.clipboard?.writeText(curlExample(made.url, made.secret,
                exampleBody(variables)))}>Copy example</button>
            <button type="button" className="button button--secondary" onClick={() => setMade(null)}>Done, hide it</button>
          </div>
        </div>
      ) : null}

      {hooks.isPending ? <Loading label="Loading webhooks…" /> : null}
      {hooks.isError ? <ErrorNotice title="The webhooks could not be loaded" error={hooks.error} /> : null}
      {hooks.data && items.length === 0 ? <p className="empty">No webhooks yet.</p> : null}
      {items.length > 0 ? (
        <div className="table-wrap" role="region" aria-labelledby="hooks-heading" tabIndex={0}>
          <table className="table">
            <caption className="visually-hidden">Incoming webhooks</caption>
            <thead>
              <tr>
                <th scope="col">Webhook</th><th scope="col">URL</th><th scope="col">Created</th>
                <th scope="col">Last used</th><th scope="col">Status</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {items.map((h) => (
                <tr key={h.id} data-hook={h.name}>
                  <th scope="row">{h.name}</th>
                  <td><code>{h.url}</code></td>
                  <td>{formatDateTime(h.created_at)} <span className="muted">by {h.created_by}</span></td>
                  <td>{h.last_used_at ? formatDateTime(h.last_used_at) : "never"}</td>
                  <td>{h.active ? "active" : `revoked ${formatDateTime(h.revoked_at ?? "")}`}</td>
                  <td className="actions">
                    {lead && h.active ? (
                      <button type="button" className="button button--danger button--small" aria-haspopup="dialog"
                        aria-label={`Revoke webhook ${h.name}`} onClick={() => { revoke.reset(); setRevoking(h); }}>
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {revoking ? (
        <ConfirmDialog title={`Revoke webhook “${revoking.name}”?`} confirmLabel="Revoke webhook"
          busy={revoke.isPending} onCancel={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}>
          <p>Its deliveries are refused (410) from now on; executions it started go on.</p>
          {revoke.isError ? (
            <p className="notice notice--error" role="alert">Not revoked: {errorMessage(revoke.error)}</p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

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

function SchedulesPanel({ workflowId, variables, lead }: Props) {
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
          {parsedVars.problem ? <p className="notice notice--error">Variables {parsedVars.problem}</p> : null}
          {create.isError ? (
            <p className="notice notice--error" role="alert">Not created: {problems(create.error)}</p>
          ) : null}
        </form>
      ) : null}
      <p className="muted">
        Five fields: minute, hour, day of month, month, day of week, read in the schedule's time zone. Each fire
        starts one execution, whichever server scans first; fires missed while no server ran happen once at the next
        start.
      </p>

      {schedules.isPending ? <Loading label="Loading schedules…" /> : null}
      {schedules.isError ? <ErrorNotice title="The schedules could not be loaded" error={schedules.error} /> : null}
      {schedules.data && items.length === 0 ? <p className="empty">No schedules yet.</p> : null}
      {items.length > 0 ? (
        <div className="table-wrap" role="region" aria-labelledby="schedules-heading" tabIndex={0}>
          <table className="table">
            <caption className="visually-hidden">Schedules</caption>
            <thead>
              <tr>
                <th scope="col">Schedule</th><th scope="col">Rule</th><th scope="col">Next fires</th>
                <th scope="col">Last fire</th><th scope="col">Status</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
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
                        <button type="button" className="button button--danger button--small" aria-haspopup="dialog"
                          aria-label={`Delete schedule ${s.name}`} onClick={() => { remove.reset(); setDeleting(s); }}>
                          Delete
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {change.isError ? <p className="notice notice--error" role="alert">Not changed: {problems(change.error)}</p> : null}
      {deleting ? (
        <ConfirmDialog title={`Delete schedule “${deleting.name}”?`} confirmLabel="Delete schedule"
          busy={remove.isPending} onCancel={() => setDeleting(null)}
          onConfirm={() => remove.mutate(deleting.id, { onSuccess: () => setDeleting(null) })}>
          <p>It fires no more; executions it started go on and still say they came from it.</p>
          {remove.isError ? (
            <p className="notice notice--error" role="alert">Not deleted: {errorMessage(remove.error)}</p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
