import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { ApiError } from "../api/client";
import { useWorkflowOptions } from "../api/workflowOptions";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import { KindPicker } from "./KindPicker";
import { createRoute, deleteRoute, fetchRoutes, fetchWebhooks, notificationKeys, type EventKind } from "./settingsApi";

/** What the API accepts (api/notifications.py SLACK_CHANNEL): a channel id (C…, G… private) or a #name. */
export const SLACK_CHANNEL = /^([CG][A-Z0-9]{2,30}|#[a-z0-9][a-z0-9._-]{0,79})$/;

/** The server's words for one field of a refused form (a 422 names the fields), if it named this one. */
function fieldError(error: unknown, name: string): string | null {
  if (!(error instanceof ApiError) || error.status !== 422) return null;
  const details = error.details as Record<string, unknown> | null;
  const said = details && typeof details === "object" ? details[name] : undefined;
  return said === undefined ? null : Array.isArray(said) ? said.join(" ") : String(said);
}

const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** A workspace's routes (admins): these events, of a workflow or a tool, to these people, a webhook or a Slack channel;
 * escalation. */
export function NotificationRoutes() {
  const queryClient = useQueryClient();
  const ids = {
    name: useId(),
    tool: useId(),
    users: useId(),
    after: useId(),
    next: useId(),
    workflow: useId(),
    endpoint: useId(),
    nextEndpoint: useId(),
    slack: useId(),
  };
  const slackHint = useId();
  const empty = {
    name: "",
    tool: "",
    users: "",
    after: "",
    next: "",
    workflow: "",
    endpoint: "",
    nextEndpoint: "",
    slack: "",
  };
  const [draft, setDraft] = useState(empty);
  const workflows = useWorkflowOptions();
  const endpoints = useQuery({ queryKey: notificationKeys.webhooks, queryFn: ({ signal }) => fetchWebhooks(signal) });
  const endpointChoices = endpoints.data?.items ?? [];
  // the options of both webhook selects (the route's endpoint, the one it escalates to)
  const endpointOptions = (
    <>
      <option value="">none</option>
      {endpointChoices.map((e) => (
        <option key={e.id} value={e.id}>
          {e.name || e.url}
        </option>
      ))}
    </>
  );
  const [events, setEvents] = useState<EventKind[]>(["approval_requested", "review_held"]);
  const routes = useQuery({ queryKey: notificationKeys.routes, queryFn: ({ signal }) => fetchRoutes(signal) });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: notificationKeys.routes });
  const create = useMutation({
    mutationFn: () =>
      createRoute({
        name: draft.name,
        events,
        workflow_id: draft.workflow || null,
        tool: draft.tool.trim() || null,
        users: list(draft.users),
        endpoint_id: draft.endpoint || null,
        escalate_after_s: draft.after ? Number(draft.after) * 60 : null,
        escalate_users: list(draft.next),
        escalate_endpoint_id: draft.nextEndpoint || null,
        slack_channel: draft.slack.trim() || null,
        enabled: true,
      }),
    onSuccess: () => {
      setDraft(empty);
      refresh();
    },
  });
  const remove = useMutation({ mutationFn: deleteRoute, onSuccess: refresh });
  const slackTyped = draft.slack.trim();
  const slackProblem =
    slackTyped && !SLACK_CHANNEL.test(slackTyped)
      ? "Give a channel id (C0123ABCD) or a #channel-name (lowercase)."
      : fieldError(create.error, "slack_channel");
  const field = (key: keyof typeof draft) => ({
    id: ids[key],
    value: draft[key],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value }),
  });
  return (
    <div>
      <h3>Routes</h3>
      <p className="muted">
        Send these events (of a tool, e.g. sql.*) to these people, a webhook or a Slack channel, and escalate an undecided
        review.
      </p>
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
              <strong>{r.name || "(unnamed)"}</strong> →{" "}
              {[
                ...(r.users ?? []),
                ...endpointChoices.filter((e) => e.id === r.endpoint_id).map((e) => e.name || e.url),
                ...(r.slack_channel ? [`Slack ${r.slack_channel}`] : []),
              ].join(", ")}
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
          if (!create.isPending && !(slackTyped && !SLACK_CHANNEL.test(slackTyped))) create.mutate();
        }}
      >
        <div className="field">
          <label htmlFor={ids.name}>Route name</label>
          <input type="text" maxLength={200} {...field("name")} />
        </div>
        <KindPicker name="Events" value={events} onChange={setEvents} />
        <div className="field">
          <label htmlFor={ids.workflow}>Workflow (optional)</label>
          <select {...field("workflow")}>
            <option value="">any workflow</option>
            {(workflows.data ?? []).map((w) => (
              <option key={w.workflow_id} value={w.workflow_id}>
                {w.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.tool}>Tool (optional)</label>
          <input type="text" maxLength={200} placeholder="sql.*" {...field("tool")} />
        </div>
        <div className="field">
          <label htmlFor={ids.users}>People (emails, comma-separated)</label>
          <input type="text" {...field("users")} />
        </div>
        <div className="field">
          <label htmlFor={ids.endpoint}>Webhook endpoint</label>
          <select {...field("endpoint")}>
            {endpointOptions}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.slack}>Slack channel (optional)</label>
          <input
            type="text"
            maxLength={81}
            placeholder="#payments or C0123ABCD"
            aria-invalid={slackProblem ? true : undefined}
            aria-describedby={slackHint}
            {...field("slack")}
          />
          <p id={slackHint} className={slackProblem ? "field-error" : "muted"} role={slackProblem ? "alert" : undefined}>
            {slackProblem ?? "Reviews this route matches are posted there instead of the Slack app's default channel."}
          </p>
        </div>
        <div className="field">
          <label htmlFor={ids.after}>Escalate after (minutes)</label>
          <input type="number" min={1} {...field("after")} />
        </div>
        <div className="field">
          <label htmlFor={ids.next}>Escalate to (emails)</label>
          <input type="text" {...field("next")} />
        </div>
        <div className="field">
          <label htmlFor={ids.nextEndpoint}>Escalate to webhook</label>
          <select {...field("nextEndpoint")}>
            {endpointOptions}
          </select>
        </div>
        <button type="submit" className="button" disabled={create.isPending}>
          Add route
        </button>
        <FailureNotice mutation={create} what="Not added" />
      </form>
    </div>
  );
}
