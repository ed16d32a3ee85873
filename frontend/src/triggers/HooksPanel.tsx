import { useId, useState, type FormEvent } from "react";
import { ListStatus, ListTable } from "../components/ListTable";
import { CredentialCells, RevokeCell, SecretOnce } from "../components/SecretOnce";
import { ConfirmMutation } from "../dashboards/ConfirmDialog";
import {
  curlExample,
  exampleBody,
  useCreateHook,
  useHooks,
  useRevokeHook,
  type CreatedHook,
  type Hook,
} from "./api";
import { FormProblems } from "./FormProblems";
import { parseObject, type TriggerProps as Props } from "./forms";

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
          <FormProblems field="Mapping" problem={parsedMapping.problem} create={create} />
        </form>
      ) : null}
      <p className="muted">
        Without a mapping the body's fields are the variables; a mapping reads each variable from a path of the
        body (<code>variable → order.id</code>).
      </p>

      {made ? (
        <SecretOnce id="hook-secret" label="The new webhook's secret" value={made.secret} copyLabel="Copy secret"
          onDone={() => setMade(null)} title={<>Webhook “{made.name}” created. Copy its secret now: it is not shown again.</>}
          actions={
            <button type="button" className="button button--secondary"
              onClick={() => void navigator.clipboard?.writeText(curlExample(made.url, made.secret,
                exampleBody(variables, made.mapping)))}>Copy example</button>
          }>
          <p className="muted">
            POST JSON to <code>{made.url}</code>, signed: <code>X-Coach-Signature: sha256=HMAC-SHA256(secret,
            "&lt;timestamp&gt;.&lt;body&gt;")</code> with <code>X-Coach-Timestamp</code> (Unix seconds) and a
            unique <code>X-Coach-Delivery</code> id. For example:
          </p>
          <pre className="mono triggers__example" aria-label="Example request">
            {curlExample(made.url, made.secret, exampleBody(variables, made.mapping))}
          </pre>
        </SecretOnce>
      ) : null}

      <ListStatus query={hooks} count={items.length} loading="Loading webhooks…" failed="The webhooks could not be loaded"
        empty="No webhooks yet." />
      {items.length > 0 ? (
        <ListTable labelledBy="hooks-heading" caption="Incoming webhooks" actions
          columns={["Webhook", "URL", "Created", "Last used", "Status"]}>
          {items.map((h) => (
            <tr key={h.id} data-hook={h.name}>
              <th scope="row">{h.name}</th>
              <td><code>{h.url}</code></td>
              <CredentialCells item={h} />
              <RevokeCell shown={lead && h.active} label={`Revoke webhook ${h.name}`}
                onRevoke={() => { revoke.reset(); setRevoking(h); }} />
            </tr>
          ))}
        </ListTable>
      ) : null}
      {revoking ? (
        <ConfirmMutation title={`Revoke webhook “${revoking.name}”?`} confirmLabel="Revoke webhook" mutation={revoke}
          variables={revoking.id} failure="Not revoked" onClose={() => setRevoking(null)}>
          <p>Its deliveries are refused (410) from now on; executions it started go on.</p>
        </ConfirmMutation>
      ) : null}
    </div>
  );
}

