import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import { formatDateTime } from "../format";
import { KindPicker } from "./KindPicker";
import { NotificationRoutes } from "./NotificationRoutes";
import { createWebhook, deleteWebhook, fetchWebhooks, notificationKeys, type EventKind, type WebhookEndpoint } from "./settingsApi";

/** Settings → Workspace notifications (admins): outgoing webhook endpoints with their delivery status, and routes. */
export function WorkspaceNotifications() {
  return (
    <section aria-labelledby="workspace-notifications-heading" id="workspace-notifications">
      <h2 id="workspace-notifications-heading">Workspace notifications</h2>
      <Webhooks />
      <NotificationRoutes />
    </section>
  );
}

function endpointState(e: WebhookEndpoint): string {
  if (!e.enabled) return "disabled";
  if (e.failing) return `failing (${e.consecutive_failures} in a row${e.last_status ? `, last answer ${e.last_status}` : ""})`;
  return e.last_delivery_at ? "delivering" : "no delivery yet";
}

function Webhooks() {
  const queryClient = useQueryClient();
  const ids = { name: useId(), url: useId() };
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<EventKind[]>(["approval_requested", "review_held"]);
  const [secret, setSecret] = useState<string | null>(null);
  const endpoints = useQuery({ queryKey: notificationKeys.webhooks, queryFn: ({ signal }) => fetchWebhooks(signal) });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: notificationKeys.webhooks });
  const create = useMutation({
    mutationFn: () => createWebhook({ name, url, events }),
    onSuccess: (made) => {
      setSecret(made.secret ?? null);
      setName("");
      setUrl("");
      refresh();
    },
  });
  const remove = useMutation({ mutationFn: deleteWebhook, onSuccess: refresh });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!create.isPending && url.trim()) create.mutate();
  };
  return (
    <div>
      <h3>Outgoing webhooks</h3>
      <p className="muted">
        Coach POSTs JSON signed with <code>X-Coach-Signature: sha256=…</code> (the endpoint's secret) and a{" "}
        <code>X-Coach-Delivery</code> id; failed deliveries are retried with backoff.
      </p>
      {endpoints.isPending ? (
        <Loading label="Loading webhook endpoints…" />
      ) : endpoints.isError ? (
        <ErrorNotice title="Could not load the webhook endpoints" error={endpoints.error} />
      ) : (endpoints.data.items ?? []).length === 0 ? (
        <p className="empty">No webhook endpoint.</p>
      ) : (
        <ul className="webhooks" aria-label="Webhook endpoints">
          {(endpoints.data.items ?? []).map((e) => (
            <li key={e.id}>
              <strong>{e.name || e.url}</strong> <span className="mono">{e.url}</span>{" "}
              <span className={e.failing ? "notice--error" : "muted"}>{endpointState(e)}</span>
              {e.last_error ? <span className="muted"> · {e.last_error}</span> : null}
              {e.deliveries?.length ? (
                <span className="muted">
                  {" "}
                  · last delivery {e.deliveries[0].status}, {formatDateTime(e.deliveries[0].created_at)}
                </span>
              ) : null}{" "}
              <button
                type="button"
                className="button button--danger"
                aria-label={`Remove webhook ${e.name || e.url}`}
                onClick={() => remove.mutate(e.id)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {secret ? (
        <div className="notice notice--info" role="status">
          <p className="notice__title">Endpoint added. Its signing secret, shown once:</p>
          <input className="mono" readOnly value={secret} aria-label="Signing secret" />
          <button type="button" className="button button--secondary" onClick={() => setSecret(null)}>
            Done, hide it
          </button>
        </div>
      ) : null}
      <form className="form" onSubmit={submit} aria-label="Add a webhook endpoint">
        <div className="field">
          <label htmlFor={ids.name}>Name</label>
          <input id={ids.name} type="text" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.url}>URL</label>
          <input id={ids.url} type="url" value={url} maxLength={2000} onChange={(e) => setUrl(e.target.value)} />
        </div>
        <KindPicker name="Events it receives" value={events} onChange={setEvents} />
        <button type="submit" className="button" disabled={create.isPending || !url.trim()}>
          Add endpoint
        </button>
        <FailureNotice mutation={create} what="Not added" />
      </form>
    </div>
  );
}
