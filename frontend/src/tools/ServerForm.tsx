import { useState, type FormEvent, type ReactElement } from "react";
import { ApiError } from "../api/client";
import type { ToolServerIn } from "./types";

/** The fields a 422 names (`details`: {field: [messages]}), as one line each. */
function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || error.status !== 422 || !error.details || typeof error.details !== "object") return {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(error.details as Record<string, unknown>)) {
    out[key.split(".")[0]] = Array.isArray(value) ? value.join("; ") : String(value);
  }
  return out;
}

/**
 * Adds an MCP server: streamable HTTP by URL (with an optional bearer token, stored encrypted and never shown
 * again) or a stdio command the server's configuration allows (COACH_MCP_STDIO_ALLOW).
 */
export function ServerForm({ busy, error, onSubmit, onCancel }: {
  busy: boolean;
  error: unknown;
  onSubmit: (body: ToolServerIn) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState("");
  const [transport, setTransport] = useState<"http" | "stdio">("http");
  const [url, setUrl] = useState("");
  const [command, setCommand] = useState("");
  const [token, setToken] = useState("");
  const [trusted, setTrusted] = useState(false);
  const errors = fieldErrors(error);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body: ToolServerIn = { name: name.trim(), transport, trusted };
    if (transport === "http") {
      body.url = url.trim();
      if (token) body.bearer_token = token;
    } else {
      body.command = command.trim().split(/\s+/).filter(Boolean);
    }
    onSubmit(body);
  };

  const field = (id: string, label: string, input: ReactElement, hint?: string) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {input}
      {hint ? <p className="muted field__hint">{hint}</p> : null}
      {errors[id.replace("server-", "")] ? (
        <p className="field__error" role="alert">{errors[id.replace("server-", "")]}</p>
      ) : null}
    </div>
  );

  return (
    <form className="tool-server-form" onSubmit={submit} aria-label="Add an MCP server">
      {field("server-name", "Name", (
        <input id="server-name" value={name} required onChange={(e) => setName(e.target.value)}
          aria-invalid={!!errors.name} placeholder="orders" />
      ), "Its tools are called <name>.<tool> in steps and policies.")}
      {field("server-transport", "Transport", (
        <select id="server-transport" value={transport} onChange={(e) => setTransport(e.target.value as "http" | "stdio")}>
          <option value="http">Streamable HTTP (URL)</option>
          <option value="stdio">stdio (an allowed command)</option>
        </select>
      ))}
      {transport === "http" ? (
        <>
          {field("server-url", "URL", (
            <input id="server-url" value={url} onChange={(e) => setUrl(e.target.value)} aria-invalid={!!errors.url}
              placeholder="https://mcp.example.com/mcp" />
          ))}
          {field("server-headers", "Bearer token (optional)", (
            <input id="server-headers" type="password" autoComplete="off" value={token}
              onChange={(e) => setToken(e.target.value)} />
          ), "Stored encrypted; never shown again.")}
        </>
      ) : (
        field("server-command", "Command", (
          <input id="server-command" value={command} onChange={(e) => setCommand(e.target.value)}
            aria-invalid={!!errors.command} placeholder="npx -y @modelcontextprotocol/server-everything" />
        ), "Program and arguments, separated by spaces; must start with a command line COACH_MCP_STDIO_ALLOW allows.")
      )}
      <div className="field field--inline">
        <input id="server-trusted" type="checkbox" checked={trusted} onChange={(e) => setTrusted(e.target.checked)} />
        <label htmlFor="server-trusted">Trusted: take its annotations (read-only, destructive…) as the tools' risk</label>
      </div>
      {error && !Object.keys(errors).length ? (
        <p role="alert" className="notice notice--error">{error instanceof Error ? error.message : String(error)}</p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button" disabled={busy}>{busy ? "Adding…" : "Add and list tools"}</button>
        <button type="button" className="button button--secondary" onClick={onCancel} disabled={busy}>Cancel</button>
      </div>
    </form>
  );
}
