import { useId, useState, type FormEvent } from "react";
import { ListStatus, ListTable } from "../components/ListTable";
import { CopyButton, CredentialCells, RevokeCell, SecretOnce } from "../components/SecretOnce";
import { ConfirmMutation } from "../dashboards/ConfirmDialog";
import "../admin/admin.css"; // the shared form row and the token-shown-once box (Settings → API tokens)
import { mcpUrl, useAgents, useCreateAgent, useRevokeAgent, type AgentIdentity, type CreatedAgent } from "./agents";
import { FailureNotice } from "../components/QueryState";

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
  // the agent whose token is shown was revoked (here, or in another tab): its token and command are dropped
  const madeRevoked =
    made !== null &&
    ((revoke.isSuccess && revoke.variables === made.id) || items.some((a) => a.id === made.id && !a.active));
  const command = made
    ? `claude mcp add --transport http coach ${mcpUrl(made.mcp_path)} --header "Authorization: Bearer ${made.token}"`
    : "";

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
        <FailureNotice mutation={create} what="Not created" />
      </form>

      {made && madeRevoked ? (
        <p className="notice notice--info" role="status">
          Agent “{made.name}” was revoked: its token is refused, so it is no longer shown.{" "}
          <button type="button" className="button button--secondary button--small" onClick={() => setMade(null)}>
            Dismiss
          </button>
        </p>
      ) : made ? (
        <SecretOnce id="agent-token" label="The new agent's token" value={made.token} onDone={() => setMade(null)}
          copyLabel="Copy token" actions={<CopyButton text={command} label="Copy command" />}
          title={<>Agent “{made.name}” created. Copy its token now: it is not shown again.</>}>
          <p className="muted">
            Claude Code: <code>{command}</code>
          </p>
        </SecretOnce>
      ) : null}

      <ListStatus query={agents} count={items.length} loading="Loading agents…" failed="The agents could not be loaded"
        empty="No agents yet." />
      {items.length > 0 ? (
        <ListTable labelledBy="agents-heading" caption="Agent identities" actions
          columns={["Agent", "Description", "Created", "Last used", "Status"]}>
          {items.map((a) => (
            <tr key={a.id} data-agent={a.name}>
              <th scope="row"><code>{a.name}</code></th>
              <td>{a.description}</td>
              <CredentialCells item={a} />
              <RevokeCell shown={a.active} label={`Revoke agent ${a.name}`}
                onRevoke={() => { revoke.reset(); setRevoking(a); }} />
            </tr>
          ))}
        </ListTable>
      ) : null}
      {revoking ? (
        <ConfirmMutation title={`Revoke agent “${revoking.name}”?`} confirmLabel="Revoke agent" mutation={revoke}
          variables={revoking.id} failure="Not revoked" onClose={() => setRevoking(null)}>
          <p>Its token is refused from its next request on; a call of it held for a review is not run.</p>
        </ConfirmMutation>
      ) : null}
    </section>
  );
}
