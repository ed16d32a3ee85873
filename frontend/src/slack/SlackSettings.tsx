import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { formatDateTime } from "../format";
import { serverFieldErrors } from "../policies/fieldErrors";
import {
  fetchMySlackId,
  fetchSlackSettings,
  removeSlackSettings,
  saveMySlackId,
  saveSlackSettings,
  slackKeys,
  testSlack,
  type SlackSettings,
  type SlackSettingsChange,
} from "./api";

/**
 * Settings → Slack (admins): the workspace's Slack app. The bot token and signing secret are stored encrypted and
 * never shown again; the page says only whether each is set. docs/slack.md tells how to create the app.
 */
export function SlackWorkspaceSettings() {
  const settings = useQuery({ queryKey: slackKeys.settings, queryFn: ({ signal }) => fetchSlackSettings(signal) });
  return (
    <section aria-labelledby="slack-heading" id="slack">
      <h2 id="slack-heading">Slack</h2>
      <p className="muted">
        Coach's Slack app posts reviews with Approve / Reject buttons; a click decides as the person whose Slack member
        ID it is.
      </p>
      {settings.isPending ? (
        <Loading label="Loading the Slack settings…" />
      ) : settings.isError ? (
        <ErrorNotice title="Could not load the Slack settings" error={settings.error} onRetry={() => void settings.refetch()} />
      ) : (
        <SlackForm saved={settings.data} />
      )}
    </section>
  );
}

function SlackForm({ saved }: { saved: SlackSettings }) {
  const queryClient = useQueryClient();
  const id = useId();
  const [token, setToken] = useState("");
  const [secret, setSecret] = useState("");
  const [channel, setChannel] = useState(saved.default_channel ?? "");
  const [note, setNote] = useState(false);
  const save = useMutation({
    mutationFn: (body: SlackSettingsChange) => saveSlackSettings(body),
    onSuccess: (data) => {
      setNote(true);
      setToken("");
      setSecret("");
      setChannel(data.default_channel ?? "");
      queryClient.setQueryData(slackKeys.settings, data);
    },
  });
  const test = useMutation({ mutationFn: testSlack });
  const remove = useMutation({
    mutationFn: removeSlackSettings,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: slackKeys.settings }),
  });
  const problems = serverFieldErrors(save.error);
  const unplaced = save.isError && !["bot_token", "signing_secret", "default_channel"].some((f) => problems[f]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (save.isPending) return;
    const body: SlackSettingsChange = { default_channel: channel.trim() };
    if (token.trim()) body.bot_token = token.trim();
    if (secret.trim()) body.signing_secret = secret.trim();
    setNote(false);
    save.mutate(body);
  };
  const url = saved.interactivity_url ?? `${window.location.origin}${saved.interactivity_path}`;
  const last = saved.last_delivery;
  const error = (name: string) =>
    problems[name] ? (
      <small id={`${id}-${name}-error`} className="field-error" role="alert">
        {problems[name]}
      </small>
    ) : null;
  const described = (name: string) => ({
    id: `${id}-${name}`,
    "aria-invalid": problems[name] ? true : undefined,
    "aria-describedby": `${id}-${name}-hint${problems[name] ? ` ${id}-${name}-error` : ""}`,
  });

  return (
    <>
      <p className="muted" role="status">
        {saved.bot_token_set && saved.signing_secret_set
          ? "Slack is set up. Press Test to check the bot token with Slack."
          : "Slack is not set up yet."}
        {saved.updated_at ? ` Last changed by ${saved.updated_by} on ${formatDateTime(saved.updated_at)}.` : ""}
      </p>
      {last && last.error ? (
        <p className="notice notice--error slack-last" role="alert" data-last-delivery={last.status}>
          The last review message {last.status === "failed" ? "was given up" : "failed"} after{" "}
          {last.attempts === 1 ? "1 attempt" : `${last.attempts} attempts`}
          {last.at ? ` (${formatDateTime(last.at)})` : ""}: {last.error}
          {last.status === "pending" ? ". It is tried again." : "."}
        </p>
      ) : last && last.status === "sent" ? (
        <p className="muted slack-last" data-last-delivery="sent">
          The last review message reached Slack{last.at ? ` on ${formatDateTime(last.at)}` : ""}.
        </p>
      ) : null}
      <form className="form llm-form" onSubmit={submit} noValidate aria-label="Slack app">
        <div className="field">
          <label htmlFor={`${id}-bot_token`}>Bot token</label>
          <input
            {...described("bot_token")}
            type="password"
            value={token}
            autoComplete="new-password"
            placeholder={saved.bot_token_set ? "A token is stored: leave empty to keep it" : "xoxb-…"}
            onChange={(e) => setToken(e.target.value)}
          />
          <small id={`${id}-bot_token-hint`} className="muted">
            {saved.bot_token_set ? "A bot token is stored (encrypted; never shown)." : "No bot token is stored."} OAuth
            &amp; Permissions → Bot User OAuth Token (scopes chat:write, im:write; channels:history, groups:history,
            im:history so that a review is never posted twice).
          </small>
          {error("bot_token")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-signing_secret`}>Signing secret</label>
          <input
            {...described("signing_secret")}
            type="password"
            value={secret}
            autoComplete="new-password"
            placeholder={saved.signing_secret_set ? "A secret is stored: leave empty to keep it" : ""}
            onChange={(e) => setSecret(e.target.value)}
          />
          <small id={`${id}-signing_secret-hint`} className="muted">
            {saved.signing_secret_set ? "A signing secret is stored (encrypted; never shown)." : "No signing secret is stored."}{" "}
            Basic Information → App Credentials → Signing Secret.
          </small>
          {error("signing_secret")}
        </div>
        <div className="field">
          <label htmlFor={`${id}-default_channel`}>Default channel ID</label>
          <input
            {...described("default_channel")}
            type="text"
            value={channel}
            maxLength={64}
            placeholder="C0123ABCD"
            autoComplete="off"
            onChange={(e) => setChannel(e.target.value)}
          />
          <small id={`${id}-default_channel-hint`} className="muted">
            Where reviews go when no route names another (the channel's details show its ID). Invite the app there.
          </small>
          {error("default_channel")}
        </div>
        <p className="muted">
          Interactivity Request URL: <code className="mono">{url}</code>
        </p>
        {saved.interactivity_unreachable ? (
          <p className="notice notice--error" role="note">
            Slack cannot reach this address: {saved.interactivity_unreachable}. Clicks on Approve / Reject in Slack
            will not arrive until Coach is served at a public address (set <code>COACH_PUBLIC_URL</code>).
          </p>
        ) : null}
        {unplaced ? (
          <p className="notice notice--error" role="alert">
            Not saved: {errorMessage(save.error)}
          </p>
        ) : null}
        {note && !save.isError ? (
          <p className="notice notice--info" role="status">
            Slack settings saved.
          </p>
        ) : null}
        <div className="llm-form__actions">
          <button type="submit" className="button" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save Slack settings"}
          </button>
          <button
            type="button"
            className="button button--secondary"
            disabled={test.isPending || !saved.bot_token_set}
            title={saved.bot_token_set ? undefined : "Save a bot token first"}
            aria-label="Test the Slack app"
            onClick={() => test.mutate()}
          >
            {test.isPending ? "Testing…" : "Test"}
          </button>
          {saved.bot_token_set || saved.signing_secret_set ? (
            <button type="button" className="button button--secondary" disabled={remove.isPending} onClick={() => remove.mutate()}>
              Remove Slack
            </button>
          ) : null}
        </div>
        {test.isError ? (
          <p className="notice notice--error" role="alert">
            The test could not run: {errorMessage(test.error)}
          </p>
        ) : test.data?.ok ? (
          <p className="notice notice--info" role="status">
            Slack accepted the bot token: {test.data.bot_user ? `bot ${test.data.bot_user}` : "the bot"}
            {test.data.team ? ` in ${test.data.team}` : ""}.
          </p>
        ) : test.data ? (
          <p className="notice notice--error" role="alert">
            Slack refused: {test.data.failure ?? test.data.code}
          </p>
        ) : null}
      </form>
    </>
  );
}

/** Settings → Your Slack member ID (everyone): clicks in Slack act as you, and reviews may be sent to you there. */
export function MySlackIdSettings() {
  const queryClient = useQueryClient();
  const id = useId();
  const mine = useQuery({ queryKey: slackKeys.me, queryFn: ({ signal }) => fetchMySlackId(signal) });
  const [value, setValue] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (slackId: string) => saveMySlackId(slackId),
    onSuccess: (data) => {
      setValue(null);
      queryClient.setQueryData(slackKeys.me, data);
    },
  });
  const shown = value ?? mine.data?.slack_user_id ?? "";
  const problem = serverFieldErrors(save.error).slack_user_id;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!save.isPending) save.mutate(shown.trim());
  };
  return (
    <section aria-labelledby="my-slack-heading">
      <h2 id="my-slack-heading">Your Slack member ID</h2>
      {mine.isPending ? (
        <Loading label="Loading your Slack member ID…" />
      ) : mine.isError ? (
        <ErrorNotice title="Could not load your Slack member ID" error={mine.error} />
      ) : (
        <form className="form admin__invite" onSubmit={submit} noValidate aria-label="Your Slack member ID">
          <div className="field">
            <label htmlFor={`${id}-slack`}>Slack member ID</label>
            <input
              id={`${id}-slack`}
              type="text"
              value={shown}
              maxLength={32}
              placeholder="U0123ABCD"
              autoComplete="off"
              aria-invalid={problem ? true : undefined}
              aria-describedby={`${id}-slack-hint`}
              onChange={(e) => setValue(e.target.value)}
            />
            <small id={`${id}-slack-hint`} className="muted">
              In Slack: your profile, ⋮, Copy member ID. Your Approve / Reject clicks there then act as you, in this
              workspace. Empty: Slack clicks decide nothing for you.
            </small>
            {problem ? (
              <small className="field-error" role="alert">
                {problem}
              </small>
            ) : null}
          </div>
          <button type="submit" className="button" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save Slack ID"}
          </button>
          {save.isError && !problem ? (
            <p className="notice notice--error" role="alert">
              Not saved: {errorMessage(save.error)}
            </p>
          ) : null}
          {save.isSuccess && value === null ? (
            <p className="muted" role="status">
              {mine.data?.slack_user_id ? `Saved: ${mine.data.slack_user_id}.` : "Cleared."}
            </p>
          ) : null}
        </form>
      )}
    </section>
  );
}
