import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useContext, useId, useState, type FormEvent } from "react";
import { ListTable } from "../components/ListTable";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import { setShortcutMode, useShortcutMode, type ShortcutMode } from "../coaching/shortcutPreference";
import { formatDateTime } from "../format";
import { useDocumentTitle } from "../hooks";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { adminKeys, createToken, fetchTokens, revokeToken, type ApiToken } from "./api";
import { AuthContext } from "../auth/context";
import { LlmProviderSettings } from "./LlmProviderSettings";
import { ReviewSettings } from "./ReviewSettings";
import { satisfies } from "../approvals/eligibility";
import { NotificationSettings } from "../notifications/NotificationSettings";
import { WorkspaceNotifications } from "../notifications/WorkspaceNotifications";
import { MySlackIdSettings, SlackWorkspaceSettings } from "../slack/SlackSettings";
import "./admin.css";
import { SecretOnce } from "../components/SecretOnce";
import { DialogButton } from "../components/DialogButton";

const SHORTCUT_CHOICES: { value: ShortcutMode; label: string; hint: string }[] = [
  { value: "single", label: "Single keys", hint: "a accepts, r rejects, j/k move… (fastest)" },
  { value: "alt", label: "With Alt", hint: "Alt+a accepts, Alt+r rejects…: no stray key press or speech input decides anything" },
  { value: "off", label: "Off", hint: "only the buttons, Enter, Esc and the arrows" },
];

/**
 * Each person's own settings: keyboard shortcuts (kept in this browser), notifications, their Slack member ID and
 * bearer tokens for scripts; for leads and admins, the workspace's attentive-review settings; for admins, the
 * workspace's LLM provider, its notification routes and webhooks, and its Slack app too.
 */
export default function SettingsPage() {
  useDocumentTitle("Settings");
  const role = useContext(AuthContext)?.role; // read softly: the page also renders outside a signed-in shell
  return (
    <section aria-labelledby="settings-heading" className="admin">
      <h1 id="settings-heading">Settings</h1>
      <ShortcutSettings />
      <p className="muted">
        The colours follow your system's light or dark setting (<code>prefers-color-scheme</code>).
      </p>
      <NotificationSettings />
      <TokenSettings />
      <MySlackIdSettings />
      {role && satisfies(role, "lead") ? <ReviewSettings /> : null}
      {role === "admin" ? <LlmProviderSettings /> : null}
      {role === "admin" ? <WorkspaceNotifications /> : null}
      {role === "admin" ? <SlackWorkspaceSettings /> : null}
    </section>
  );
}

function ShortcutSettings() {
  const mode = useShortcutMode();
  const [saved, setSaved] = useState(false);
  return (
    <fieldset className="settings__choices">
      <legend>
        <h2>Keyboard shortcuts</h2>
      </legend>
      <p className="muted">Kept in this browser. Enter, Esc and the arrows always work.</p>
      {SHORTCUT_CHOICES.map((choice) => (
        <label key={choice.value} className="settings__choice">
          <input
            type="radio"
            name="shortcuts"
            value={choice.value}
            checked={mode === choice.value}
            onChange={() => {
              setShortcutMode(choice.value);
              setSaved(true);
            }}
          />
          <span>
            <strong>{choice.label}</strong> <span className="muted">{choice.hint}</span>
          </span>
        </label>
      ))}
      <p role="status" className={saved ? "muted" : "visually-hidden"}>
        {saved ? `Shortcuts: ${SHORTCUT_CHOICES.find((c) => c.value === mode)?.label}.` : ""}
      </p>
    </fieldset>
  );
}

/** Bearer tokens: made with a name, shown once, revoked one by one. */
function TokenSettings() {
  const queryClient = useQueryClient();
  const nameId = useId();
  const [name, setName] = useState("");
  const [made, setMade] = useState<ApiToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const tokens = useQuery({ queryKey: adminKeys.tokens, queryFn: ({ signal }) => fetchTokens(signal) });
  const create = useMutation({
    mutationFn: () => createToken(name.trim()),
    onSuccess: (token) => {
      setMade(token);
      setName("");
      void queryClient.invalidateQueries({ queryKey: adminKeys.tokens });
    },
  });
  const revoke = useMutation({
    mutationFn: (token: ApiToken) => revokeToken(token.id),
    onSuccess: () => {
      setRevoking(null);
      void queryClient.invalidateQueries({ queryKey: adminKeys.tokens });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!create.isPending && name.trim()) create.mutate();
  };
  const active = (tokens.data?.items ?? []).filter((t) => !t.revoked_at);

  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">API tokens</h2>
      <p className="muted">
        For scripts: send <code>Authorization: Bearer &lt;token&gt;</code>. A token acts as you, with your role in each
        workspace (name one with the <code>X-Coach-Workspace</code> header).
      </p>
      <form className="form admin__invite" onSubmit={submit} aria-label="Create a token">
        <div className="field">
          <label htmlFor={nameId}>Token name</label>
          <input
            id={nameId}
            type="text"
            value={name}
            maxLength={200}
            placeholder="e.g. nightly import"
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button" disabled={create.isPending || !name.trim()}>
          {create.isPending ? "Creating…" : "Create token"}
        </button>
        <FailureNotice mutation={create} what="Not created" />
      </form>

      {made?.token ? (
        <SecretOnce id="token-secret" label="The new token" value={made.token} onDone={() => setMade(null)}
          title={<>Token “{made.name}” created. Copy it now: it is not shown again.</>} />
      ) : null}

      {tokens.isPending ? (
        <Loading label="Loading your tokens…" />
      ) : tokens.isError ? (
        <ErrorNotice title="Could not load your tokens" error={tokens.error} />
      ) : active.length === 0 ? (
        <p className="empty">You have no active token.</p>
      ) : (
        <ListTable labelledBy="tokens-heading" caption="Your active tokens" actions columns={["Name", "Created", "Last used"]}>
          {active.map((t) => (
            <tr key={t.id}>
              <th scope="row">{t.name}</th>
              <td>{formatDateTime(t.created_at)}</td>
              <td>{t.last_used_at ? formatDateTime(t.last_used_at) : "never"}</td>
              <td className="actions">
                <DialogButton className="button button--danger" label={`Revoke token ${t.name}`}
                  onOpen={() => { revoke.reset(); setRevoking(t); }}>
                  Revoke
                </DialogButton>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke token"
          busy={revoke.isPending}
          onConfirm={() => revoke.mutate(revoking)}
          onCancel={() => setRevoking(null)}
        >
          <p>Scripts using it are refused from now on, and their open connections close.</p>
          <FailureNotice mutation={revoke} what="Not revoked" />
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
