import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import { PushSwitch } from "./PushSwitch";
import {
  EVENT_KINDS,
  KIND_LABELS,
  fetchSettings,
  notificationKeys,
  saveSettings,
  type NotificationSettings as Settings,
} from "./settingsApi";

/**
 * Settings → Notifications (each person): email on or off, per event kind; Web Push to this browser and per event
 * kind; and quiet hours in a time zone (email and push are held until they end). Approvals and reviews carry Approve / Reject links.
 */
export function NotificationSettings() {
  const settings = useQuery({ queryKey: notificationKeys.settings, queryFn: ({ signal }) => fetchSettings(signal) });
  return (
    <section aria-labelledby="notifications-heading" id="notifications">
      <h2 id="notifications-heading">Notifications</h2>
      <p className="muted">
        What Coach emails you when you are not looking. Emails about approvals carry Approve and Reject links that work
        once, for you only.
      </p>
      <PushSwitch />
      {settings.isPending ? (
        <Loading label="Loading your notification settings…" />
      ) : settings.isError ? (
        <ErrorNotice title="Could not load your notification settings" error={settings.error} />
      ) : (
        <SettingsForm saved={normalised(settings.data)} />
      )}
    </section>
  );
}

/** The answer as the form reads it (every field there, whatever an older server sent). */
function normalised(saved: Partial<Settings>): Settings {
  return {
    email: saved.email ?? true,
    kinds: saved.kinds ?? {},
    push: saved.push ?? true,
    push_kinds: saved.push_kinds ?? saved.kinds ?? {},
    quiet_start: saved.quiet_start ?? null,
    quiet_end: saved.quiet_end ?? null,
    timezone: saved.timezone ?? "UTC",
    email_available: saved.email_available ?? true,
    kinds_available: saved.kinds_available ?? [],
  };
}

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

function SettingsForm({ saved }: { saved: Settings }) {
  const queryClient = useQueryClient();
  const ids = { start: useId(), end: useId(), zone: useId() };
  const [draft, setDraft] = useState<Settings>(saved);
  const [quiet, setQuiet] = useState(Boolean(saved.quiet_start));
  const save = useMutation({
    mutationFn: () =>
      saveSettings({
        // the settings only: email_available and kinds_available are the server's to say
        email: draft.email,
        kinds: draft.kinds,
        push: draft.push,
        push_kinds: draft.push_kinds,
        quiet_start: quiet ? draft.quiet_start || "22:00" : null,
        quiet_end: quiet ? draft.quiet_end || "07:00" : null,
        timezone: draft.timezone || "UTC",
      }),
    onSuccess: (answer) => {
      queryClient.setQueryData(notificationKeys.settings, answer);
      setDraft(normalised(answer));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!save.isPending) save.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="Notification settings">
      <label className="settings__choice">
        <input
          type="checkbox"
          checked={draft.email}
          onChange={(e) => setDraft({ ...draft, email: e.target.checked })}
        />
        <span>
          <strong>Email me</strong>
          {saved.email_available === false ? (
            <small className="muted settings__note" data-email-unavailable>
              {" "}— this server sends no email: an admin has not set up SMTP (COACH_SMTP_HOST), so nothing is mailed
              whatever you choose here.
            </small>
          ) : null}
        </span>
      </label>
      <fieldset className="settings__choices" disabled={!draft.email}>
        <legend>Email me when</legend>
        {EVENT_KINDS.map((kind) => (
          <label key={kind} className="settings__choice">
            <input
              type="checkbox"
              checked={draft.kinds[kind] ?? false}
              onChange={(e) => setDraft({ ...draft, kinds: { ...draft.kinds, [kind]: e.target.checked } })}
            />
            <span>{KIND_LABELS[kind]}</span>
          </label>
        ))}
      </fieldset>
      <label className="settings__choice">
        <input type="checkbox" checked={draft.push} onChange={(e) => setDraft({ ...draft, push: e.target.checked })} />
        <span>
          <strong>Push to my browsers</strong> <span className="muted">those where "Notify this browser" is on</span>
        </span>
      </label>
      <fieldset className="settings__choices" disabled={!draft.push}>
        <legend>Push when</legend>
        {EVENT_KINDS.map((kind) => (
          <label key={kind} className="settings__choice">
            <input
              type="checkbox"
              checked={draft.push_kinds[kind] ?? false}
              onChange={(e) => setDraft({ ...draft, push_kinds: { ...draft.push_kinds, [kind]: e.target.checked } })}
            />
            <span>{KIND_LABELS[kind]}</span>
          </label>
        ))}
      </fieldset>
      <label className="settings__choice">
        <input
          type="checkbox"
          checked={quiet}
          onChange={(e) => {
            setQuiet(e.target.checked);
            if (e.target.checked && !draft.quiet_start)
              setDraft({ ...draft, quiet_start: "22:00", quiet_end: "07:00", timezone: browserZone() });
          }}
        />
        <span>
          <strong>Quiet hours</strong> <span className="muted">email and push wait until they end</span>
        </span>
      </label>
      {quiet ? (
        <div className="settings__quiet">
          <div className="field">
            <label htmlFor={ids.start}>From</label>
            <input
              id={ids.start}
              type="time"
              value={draft.quiet_start ?? ""}
              onChange={(e) => setDraft({ ...draft, quiet_start: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor={ids.end}>Until</label>
            <input
              id={ids.end}
              type="time"
              value={draft.quiet_end ?? ""}
              onChange={(e) => setDraft({ ...draft, quiet_end: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor={ids.zone}>Time zone</label>
            <input
              id={ids.zone}
              type="text"
              value={draft.timezone}
              maxLength={64}
              onChange={(e) => setDraft({ ...draft, timezone: e.target.value })}
            />
          </div>
        </div>
      ) : null}
      <button type="submit" className="button" disabled={save.isPending}>
        {save.isPending ? "Saving…" : "Save notification settings"}
      </button>
      {save.isSuccess ? (
        <p role="status" className="muted">
          Notification settings saved.
        </p>
      ) : null}
      <FailureNotice mutation={save} what="Not saved" />
    </form>
  );
}
