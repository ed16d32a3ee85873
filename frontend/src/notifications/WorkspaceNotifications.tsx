import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { formatDateTime } from "../format";
import {
  EVENT_KINDS,
  KIND_LABELS,
  createRoute,
  createWebhook,
  deleteRoute,
  deleteWebhook,
  fetchRoutes,
  fetchWebhooks,
  notificationKeys,
  type EventKind,
  type WebhookEndpoint,
} from "./settingsApi";

const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

function KindPicker({ value, onChange, name }: { value: EventKind[]; onChange: (v: EventKind[]) => void; name: string }) {
  return (
    <fieldset className="settings__choices">
      <legend>{name}</legend>
      {EVENT_KINDS.map((kind) => (
        <label key={kind} className="settings__choice">
          <input
            type="checkbox"
            checked={value.includes(kind)}
            onChange={(e) => onChange(e.target.checked ? [...value, kind] : value.filter((k) => k !== kind))}
          />
          <span>{KIND_LABELS[kind]}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** Settings → Workspace notifications (admins): outgoing webhook endpoints with their delivery status, and routes. */
export function WorkspaceNotifications() {
  return (
    <section aria-labelledby="workspace-notifications-heading" id="workspace-notifications">
      <h2 id="workspace-notifications-heading">Workspace notifications</h2>
      <Webhooks />
      <Routes />
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
        {create.isError ? (
          <p className="notice notice--error" role="alert">
            Not added: {errorMessage(create.error)}
          </p>
        ) : null}
      </form>
    </div>
  );
}

function Routes() {
  const queryClient = useQueryClient();
  const ids = { name: useId(), tool: useId(), users: useId(), after: useId(), next: useId() };
  const [draft, setDraft] = useState({ name: "", tool: "", users: "", after: "", next: "" });
  const [events, setEvents] = useState<EventKind[]>(["approval_requested", "review_held"]);
  const routes = useQuery({ queryKey: notificationKeys.routes, queryFn: ({ signal }) => fetchRoutes(signal) });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: notificationKeys.routes });
  const create = useMutation({
    mutationFn: () =>
      createRoute({
        name: draft.name,
        events,
        workflow_id: null,
        tool: draft.tool.trim() || null,
        users: list(draft.users),
        endpoint_id: null,
        escalate_after_s: draft.after ? Number(draft.after) * 60 : null,
        escalate_users: list(draft.next),
        escalate_endpoint_id: null,
        enabled: true,
      }),
    onSuccess: () => {
      setDraft({ name: "", tool: "", users: "", after: "", next: "" });
      refresh();
    },
  });
  const remove = useMutation({ mutationFn: deleteRoute, onSuccess: refresh });
  const field = (key: keyof typeof draft) => ({
    id: ids[key],
    value: draft[key],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value }),
  });
  return (
    <div>
      <h3>Routes</h3>
      <p className="muted">Send these events (of a tool, e.g. sql.*) to these people, and escalate an undecided review.</p>
      {routes.isPending ? (
        <Loading label="Loading routes…" />
      ) : routes.isError ? (
        <ErrorNotice title="Could not load the routes" error={routes.error} />
      ) : (routes.data.items ?? []).length === 0 ? (
        <p className="empty">No route: approvals go to whoever may decide them.</p>
      ) : (
        <ul aria-label="Routes">
          {(routes.data.items ?? []).map((r) => (
            <li key={r.id}>
              <strong>{r.name || "(unnamed)"}</strong> → {(r.users ?? []).join(", ") || r.endpoint_id}
              {r.escalate_after_s ? ` · after ${Math.round(r.escalate_after_s / 60)} min → ${(r.escalate_users ?? []).join(", ")}` : ""}{" "}
              <button type="button" className="button button--danger" onClick={() => r.id && remove.mutate(r.id)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="form"
        aria-label="Add a route"
        onSubmit={(e) => {
          e.preventDefault();
          if (!create.isPending) create.mutate();
        }}
      >
        <div className="field">
          <label htmlFor={ids.name}>Route name</label>
          <input type="text" maxLength={200} {...field("name")} />
        </div>
        <KindPicker name="Events" value={events} onChange={setEvents} />
        <div className="field">
          <label htmlFor={ids.tool}>Tool (optional)</label>
          <input type="text" maxLength={200} placeholder="sql.*" {...field("tool")} />
        </div>
        <div className="field">
          <label htmlFor={ids.users}>People (emails, comma-separated)</label>
          <input type="text" {...field("users")} />
        </div>
        <div className="field">
          <label htmlFor={ids.after}>Escalate after (minutes)</label>
          <input type="number" min={1} {...field("after")} />
        </div>
        <div className="field">
          <label htmlFor={ids.next}>Escalate to (emails)</label>
          <input type="text" {...field("next")} />
        </div>
        <button type="submit" className="button" disabled={create.isPending}>
          Add route
        </button>
        {create.isError ? (
          <p className="notice notice--error" role="alert">
            Not added: {errorMessage(create.error)}
          </p>
        ) : null}
      </form>
    </div>
  );
}
