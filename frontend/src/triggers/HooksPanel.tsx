import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { formatDateTime } from "../format";
import {
  curlExample,
  exampleBody,
  useCreateHook,
  useHooks,
  useRevokeHook,
  type CreatedHook,
  type Hook,
} from "./api";
import { parseObject, problems, type TriggerProps as Props } from "./forms";

/** A workflow's incoming webhooks: made (the signing secret shown once), listed, revoked. */
export function HooksPanel({ workflowId, variables, lead }: Props) {
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

