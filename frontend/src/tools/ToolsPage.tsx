import { formatDateTime } from "../format";
import { useState } from "react";
import { errorMessage } from "../api/client";
import { useAuth } from "../auth/useAuth";
import { ErrorNotice, Loading } from "../components/QueryState";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { useDocumentTitle } from "../hooks";
import { AgentsSection } from "./AgentsSection";
import { BuiltinToolsSection } from "./BuiltinToolsSection";
import { GatewayLearningSection } from "./GatewayLearningSection";
import { useAddServer, useRefreshServer, useRemoveServer, useToolServers, useTools } from "./queries";
import { ServerForm } from "./ServerForm";
import "./tools.css";
import type { RegistryTool, ToolServer } from "./types";

const SOURCE_LABEL: Record<RegistryTool["source"], string> = {
  builtin: "built in",
  entry_point: "entry point",
  mcp: "MCP",
};

function sourceText(tool: RegistryTool): string {
  if (tool.source !== "mcp") return SOURCE_LABEL[tool.source];
  return `MCP server ${tool.server}${tool.trusted ? " (trusted)" : ""}`;
}

/** A tool's params in one line: "order_id: string*, amount: number" (* required). */
export function paramsSummary(schema: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[] }>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const parts = Object.entries(properties).map(([key, prop]) => {
    const type = prop.enum ? prop.enum.map(String).join(" | ") : String(prop.type ?? "any");
    return `${key}: ${type}${required.has(key) ? "*" : ""}`;
  });
  return parts.length ? parts.join(", ") : "any object";
}

function ToolRow({ tool }: { tool: RegistryTool }) {
  return (
    <tr>
      <th scope="row"><code>{tool.name}</code></th>
      <td>{tool.description}</td>
      <td><span className={`risk risk--${tool.risk}`}>{tool.risk}</span></td>
      <td>{sourceText(tool)}</td>
      <td>
        <details>
          <summary>{paramsSummary(tool.params_schema)}</summary>
          <pre className="schema">{JSON.stringify(tool.params_schema, null, 2)}</pre>
        </details>
      </td>
    </tr>
  );
}

function ServerCard({ server, onTest, onRemove, testing }: {
  server: ToolServer;
  onTest: () => void;
  onRemove: () => void;
  testing: boolean;
}) {
  return (
    <li className="card tool-server" aria-labelledby={`server-${server.id}`}>
      <div className="tool-server__head">
        <h3 id={`server-${server.id}`}>{server.name}</h3>
        <span className="tag">{server.transport}</span>
        {server.trusted ? <span className="tag">trusted</span> : <span className="tag">annotations are hints</span>}
        {!server.enabled ? <span className="tag">disabled</span> : null}
      </div>
      <p className="muted">
        {server.transport === "http" ? server.url : server.command.join(" ")}
        {server.header_names.length ? ` · headers: ${server.header_names.join(", ")}` : ""}
      </p>
      {server.last_error ? <p role="alert" className="notice notice--error">{server.last_error}</p> : null}
      <p className="muted">
        {server.listed_at ? `${server.tools.length} tools, listed ${formatDateTime(server.listed_at)}` : "not listed yet"}
      </p>
      {server.tools.some((t) => t.problem) ? (
        <ul className="tool-server__problems">
          {server.tools.filter((t) => t.problem).map((t) => (
            <li key={t.name}><code>{t.full_name}</code> cannot be used: {t.problem}</li>
          ))}
        </ul>
      ) : null}
      <div className="form-actions">
        <button type="button" className="button button--secondary button--small" onClick={onTest} disabled={testing}>
          {testing ? "Listing…" : "Test (list tools)"}
        </button>
        <button type="button" className="button button--danger button--small" onClick={onRemove}>Remove</button>
      </div>
    </li>
  );
}

/**
 * Tools: every tool the workspace can use (built in, from entry points, from its MCP servers) with its risk,
 * source and params schema; admins add MCP servers, test them (list their tools now) and remove them.
 */
export default function ToolsPage() {
  useDocumentTitle("Tools");
  const { role } = useAuth();
  const admin = role === "admin";
  const lead = admin || role === "lead";
  const tools = useTools();
  const servers = useToolServers(admin);
  const add = useAddServer();
  const refresh = useRefreshServer();
  const remove = useRemoveServer();
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<ToolServer | null>(null);

  return (
    <section aria-labelledby="tools-heading" className="lead-page tools-page">
      <div className="page-head">
        <h1 id="tools-heading">Tools</h1>
        {admin && !adding ? (
          <button type="button" className="button" onClick={() => { add.reset(); setAdding(true); }}>Add MCP server</button>
        ) : null}
      </div>
      <p className="lead">
        What steps and agents may call. Tools of MCP servers are named <code>server.tool</code>; policies match them
        with globs such as <code>orders.*</code>.
      </p>
      {admin && adding ? (
        <section className="card" aria-labelledby="add-server-heading">
          <h2 id="add-server-heading">Add an MCP server</h2>
          <ServerForm busy={add.isPending} error={add.error}
            onCancel={() => setAdding(false)}
            onSubmit={(body) => add.mutate(body, { onSuccess: () => setAdding(false) })} />
        </section>
      ) : null}
      {admin ? (
        <section aria-labelledby="servers-heading">
          <h2 id="servers-heading">MCP servers</h2>
          {servers.isPending ? <Loading label="Loading servers…" /> : null}
          {servers.isError ? <ErrorNotice title="The servers could not be loaded" error={servers.error} /> : null}
          {refresh.isError ? <p role="alert" className="notice notice--error">{errorMessage(refresh.error)}</p> : null}
          {servers.data && !servers.data.items.length ? <p className="empty">No MCP servers yet.</p> : null}
          <ul className="tool-servers">
            {servers.data?.items.map((server) => (
              <ServerCard key={server.id} server={server}
                testing={refresh.isPending && refresh.variables === server.id}
                onTest={() => refresh.mutate(server.id)} onRemove={() => setRemoving(server)} />
            ))}
          </ul>
        </section>
      ) : null}
      {admin ? <AgentsSection /> : null}
      {lead ? <BuiltinToolsSection admin={admin} /> : null}
      {lead ? <GatewayLearningSection /> : null}
      <section aria-labelledby="registry-heading">
        <h2 id="registry-heading">Every tool</h2>
        {tools.isPending ? <Loading label="Loading tools…" /> : null}
        {tools.isError ? <ErrorNotice title="The tools could not be loaded" error={tools.error} onRetry={() => void tools.refetch()} /> : null}
        {tools.data ? (
          <div className="table-wrap">
            <table className="table tools-table" aria-labelledby="registry-heading">
              <thead>
                <tr><th scope="col">Tool</th><th scope="col">Description</th><th scope="col">Risk</th><th scope="col">Source</th><th scope="col">Params</th></tr>
              </thead>
              <tbody>
                {tools.data.items.map((tool) => <ToolRow key={tool.name} tool={tool} />)}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      {removing ? (
        <ConfirmDialog title={`Remove ${removing.name}?`} confirmLabel="Remove" busy={remove.isPending}
          onCancel={() => setRemoving(null)}
          onConfirm={() => remove.mutate(removing.id, { onSettled: () => setRemoving(null) })}>
          Steps that call <code>{removing.name}.*</code> will fail until a server of that name is added again.
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
