import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { formatDateTime } from "../format";
import "../admin/admin.css"; // the shared form row and the token-shown-once box (Settings → API tokens)
import { mcpUrl, useAgents, useCreateAgent, useRevokeAgent, type AgentIdentity, type CreatedAgent } from "./agents";

/**
 * Agents of the MCP gateway (admins): outside agents (Claude Code, Codex, Cursor, in-house bots) call this
 * workspace's tools at /mcp with an agent's bearer token; policies name agents with `match.agent`.
 */
export function AgentsSection() {
  const nameId = useId();
  const descriptionId = useId();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [made, setMade] = useState<CreatedAgent | null>(null);
  const [revoking, setRevoking] = useState<AgentIdentity | null>(null);
  const agents = useAgents(true);
  const create = useCreateAgent();
  const revoke = useRevokeAgent();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (create.isPending || !name.trim()) return;
    create.mutate({ name: name.trim(), description: description.trim() }, {
      onSuccess: (agent) => {
        setMade(agent);
        setName("");
        setDescription("");
      },
    });
  };
  const items = agents.data?.items ?? [];

  return (
    <section aria-labelledby="agents-heading" className="agents">
      <h2 id="agents-heading">Agents (MCP gateway)</h2>
      <p className="muted">
        Outside agents connect to <code>{mcpUrl()}</code> (streamable HTTP) with{" "}
        <code>Authorization: Bearer &lt;agent token&gt;</code>. Every call they make goes through this workspace's
        policies (<code>match.agent</code> names an agent); a call that needs a review waits in the queue.
      </p>
      <form className="form admin__invite" onSubmit={submit} aria-label="Create an agent">
        <div className="field">
          <label htmlFor={nameId}>Agent name</label>
          <input id={nameId} type="text" value={name} maxLength={100} placeholder="e.g. claude-code-ada"
            pattern="[A-Za-z0-9][A-Za-z0-9_.\-]*" title="letters, digits, _ . - (starting with a letter or digit)"
            onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={descriptionId}>Description</label>
          <input id={descriptionId} type="text" value={description} maxLength={2000} placeholder="optional"
            onChange={(e) => setDescription(e.target.value)} />
        </div>
        <button type="submit" className="button" disabled={create.isPending || !name.trim()}>
          {create.isPending ? "Creating…" : "Create agent"}
        </button>
        {create.isError ? (
          <p className="notice notice--error" role="alert">Not created: {errorMessage(create.error)}</p>
        ) : null}
      </form>

      {made ? (
        <div className="notice notice--info token-once" role="status" aria-labelledby="agent-token-title">
          <p id="agent-token-title" className="notice__title">
            Agent “{made.name}” created. Copy its token now: it is not shown again.
          </p>
          <label htmlFor="agent-token" className="visually-hidden">The new agent's token</label>
          <input id="agent-token" className="mono token-once__value" readOnly value={made.token}
            onFocus={(e) => e.target.select()} />
          <p className="muted">
            Claude Code:{" "}
            <code>{`claude mcp add --transport http coach ${mcpUrl(made.mcp_path)} --header "Authorization: Bearer ${made.token}"`}</code>
          </p>
          <div className="token-once__actions">
            <button type="button" className="button button--secondary"
              onClick={() => void navigator.clipboard?.writeText(made.token)}>Copy</button>
            <button type="button" className="button button--secondary" onClick={() => setMade(null)}>Done, hide it</button>
          </div>
        </div>
      ) : null}

      {agents.isPending ? <Loading label="Loading agents…" /> : null}
      {agents.isError ? <ErrorNotice title="The agents could not be loaded" error={agents.error} /> : null}
      {agents.data && items.length === 0 ? <p className="empty">No agents yet.</p> : null}
      {items.length > 0 ? (
        <div className="table-wrap" role="region" aria-labelledby="agents-heading" tabIndex={0}>
          <table className="table">
            <caption className="visually-hidden">Agent identities</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th><th scope="col">Description</th><th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th><th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id} data-agent={a.name}>
                  <th scope="row"><code>{a.name}</code></th>
                  <td>{a.description}</td>
                  <td>{formatDateTime(a.created_at)} <span className="muted">by {a.created_by}</span></td>
                  <td>{a.last_used_at ? formatDateTime(a.last_used_at) : "never"}</td>
                  <td>{a.active ? "active" : `revoked ${formatDateTime(a.revoked_at ?? "")}`}</td>
                  <td className="actions">
                    {a.active ? (
                      <button type="button" className="button button--danger button--small" aria-haspopup="dialog"
                        aria-label={`Revoke agent ${a.name}`} onClick={() => { revoke.reset(); setRevoking(a); }}>
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
        <ConfirmDialog title={`Revoke agent “${revoking.name}”?`} confirmLabel="Revoke agent" busy={revoke.isPending}
          onCancel={() => setRevoking(null)}
          onConfirm={() => revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}>
          <p>Its token is refused from its next request on; a call of it held for a review is not run.</p>
          {revoke.isError ? (
            <p className="notice notice--error" role="alert">Not revoked: {errorMessage(revoke.error)}</p>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
