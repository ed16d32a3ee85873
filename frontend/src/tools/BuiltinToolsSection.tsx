import { useState } from "react";
import { ErrorNotice, FailureNotice, Loading } from "../components/QueryState";
import { useGatewaySettings, useSaveGatewaySettings, type GatewaySettings } from "./gatewayBuiltins";

/**
 * Built-in tools for agents: which of Coach's own tools (echo, http.request, file.write …) this workspace's agents
 * may call through the MCP gateway, where they are named `coach.<tool>` and judged by the same policies. Admins
 * tick and save; leads see the choice read-only. None by default.
 */
export function BuiltinToolsSection({ admin }: { admin: boolean }) {
  const settings = useGatewaySettings(true);
  const save = useSaveGatewaySettings(); // here: the form is drawn anew from what the save answered
  return (
    <section aria-labelledby="builtin-tools-heading" className="builtin-tools">
      <h2 id="builtin-tools-heading">Built-in tools for agents</h2>
      <p className="muted">
        Agents see a chosen tool as <code>coach.&lt;tool&gt;</code> (e.g. <code>coach.http.request</code>) beside the
        MCP servers' tools; policies match that name, and the call runs in this workspace with its outbound lists and
        its data folder.
      </p>
      {settings.isPending ? <Loading label="Loading the built-in tools…" /> : null}
      {settings.isError ? (
        <ErrorNotice title="The built-in tools could not be loaded" error={settings.error}
          onRetry={() => void settings.refetch()} />
      ) : null}
      {settings.data ? (
        <BuiltinToolsForm key={settings.data.builtin_tools.join(",")} saved={settings.data} admin={admin} save={save} />
      ) : null}
    </section>
  );
}

function BuiltinToolsForm({ saved, admin, save }: {
  saved: GatewaySettings;
  admin: boolean;
  save: ReturnType<typeof useSaveGatewaySettings>;
}) {
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(saved.builtin_tools));
  const changed = chosen.size !== saved.builtin_tools.length || saved.builtin_tools.some((n) => !chosen.has(n));
  const toggle = (name: string) => {
    const next = new Set(chosen);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    setChosen(next);
  };
  return (
    <form aria-label="Built-in tools for agents"
      onSubmit={(event) => { event.preventDefault(); if (admin && changed) save.mutate([...chosen].sort()); }}>
      <fieldset className="builtin-tools__list" disabled={!admin || save.isPending}>
        <legend className="visually-hidden">Built-in tools agents may call</legend>
        {(saved.available ?? []).map((tool) => (
          // the description is outside the label: the checkbox's name is the tool and its risk, the text describes it
          <div key={tool.name} className="builtin-tools__item">
            <label>
              <input type="checkbox" checked={chosen.has(tool.name ?? "")} onChange={() => toggle(tool.name ?? "")}
                aria-describedby={`builtin-${tool.name}-text`} />
              <code>{tool.gateway_name}</code>{" "}
              <span className={`risk risk--${tool.risk}`}>{tool.risk}</span>
            </label>
            <span id={`builtin-${tool.name}-text`} className="muted">{tool.description}</span>
          </div>
        ))}
      </fieldset>
      {admin ? (
        <div className="form-actions">
          <button type="submit" className="button" disabled={!changed || save.isPending}>
            {save.isPending ? "Saving…" : "Save"}
          </button>
          {save.isSuccess && !changed ? <span role="status" className="muted">Saved.</span> : null}
        </div>
      ) : (
        <p className="muted">Only an admin can change which built-in tools agents may call.</p>
      )}
      <FailureNotice mutation={save} what="Not saved" />
    </form>
  );
}
