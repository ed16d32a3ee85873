/**
 * Learning per MCP gateway tool (leads): each tool an outside agent calls through /mcp, with its level, the
 * sequential test's statistic against its threshold, its spot checks and its mode, per agent identity too; Promote
 * (only when AUTO-ready; an admin may force it with a reason), Back to coaching, Pin and Unpin, as a step's.
 * The same dashboard pieces as the workflows' (LevelBadge, AutoReadyFlag, DataTable, ConfirmDialog, ForceReason).
 */
import { useState } from "react";
import { errorMessage } from "../api/client";
import type { MetricsSnapshot } from "../api/metrics";
import { ErrorNotice, Loading } from "../components/QueryState";
import { AutoReadyFlag, LevelBadge } from "../dashboards/Badges";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { DataTable, type Column } from "../dashboards/DataTable";
import { ModeActions } from "../dashboards/ModeActions";
import { ForceReason } from "../dashboards/ForceReason";
import { formatCount, formatPackValue, formatRate } from "../format";
import { RegionsSection } from "../regions/RegionsSection";
import {
  targetName,
  useGatewayTools,
  useSetGatewayMode,
  useSetGatewayPack,
  type GatewayPack,
  type GatewayMode,
  type GatewayModeChange,
  type GatewayTool,
} from "./gatewayLearning";

const number = (n: number | undefined) =>
  n === undefined ? "—" : n >= 1000 ? n.toExponential(2) : n.toFixed(n >= 10 ? 1 : 2);

export function gatewayModeLabel(mode: GatewayMode, forAgent = false): string {
  if (mode === "auto") return "AUTO (spot checks)";
  if (mode === "always_review") return "Always reviewed (pinned)";
  return forAgent ? "Follows the tool" : "Coaching";
}

/** The statistic against its threshold: "e-value 3.2 of the 20 needed". */
export function Statistic({ m }: { m: MetricsSnapshot }) {
  const e = m.evidence;
  if (!e || !m.decisions) return <span className="muted">no decision yet</span>;
  return (
    <span data-statistic-met={(e.e_value ?? 0) >= e.threshold}>
      e-value <strong>{number(e.e_value)}</strong> of the <strong>{number(e.threshold)}</strong> needed
    </span>
  );
}

function SpotChecks({ spot }: { spot: MetricsSnapshot | null | undefined }) {
  if (!spot || !spot.decisions) return <span className="muted">none</span>;
  return <>{formatCount(spot.decisions)}, {formatRate(spot.acceptance_rate)} accepted</>;
}

/** A tool's learned rules (its correction pack) and the lead's Accept / Stop. */
function LearnedRules({ tool, pack }: { tool: string; pack: GatewayPack | null | undefined }) {
  const setPack = useSetGatewayPack();
  if (!pack) return <span className="muted">no edits yet</span>;
  const rules = pack.rules.map((r) => `${r.field}: ${formatPackValue(r.before)} → ${formatPackValue(r.after)}`);
  return (
    <span className="gateway-rules" data-pack-enabled={pack.enabled}>
      {rules.length ? rules.join("; ") : <span className="muted">none yet</span>}{" "}
      <span className="muted">({formatCount(pack.corrections)} edits{pack.enabled ? ", accepted" : ""})</span>{" "}
      {rules.length || pack.enabled ? (
        <button type="button" className="button button--secondary button--small" disabled={setPack.isPending}
          onClick={() => setPack.mutate({ tool, enabled: !pack.enabled })}>
          {pack.enabled ? "Stop the rules" : "Accept the rules"} <span className="visually-hidden">of {tool}</span>
        </button>
      ) : null}
      {setPack.isError ? <span className="field__error" role="alert"> {errorMessage(setPack.error)}</span> : null}
    </span>
  );
}

/** One row of the table: a tool, or a tool for one identity (indented under it). */
interface Row {
  key: string;
  tool: string;
  agent?: string;
  m: MetricsSnapshot;
  mode: GatewayMode;
  effective: GatewayMode;
  spot: MetricsSnapshot | null;
  pack?: GatewayPack | null;
  /** Of an agent's decisions, those the person at the agent made (answering a confirm rule). */
  atAgent?: MetricsSnapshot | null;
}

function rowsOf(items: GatewayTool[]): Row[] {
  return items.flatMap((t) => [
    { key: t.tool, tool: t.tool, m: t, mode: t.mode, effective: t.mode, spot: t.spot_checks, pack: t.pack },
    ...Object.entries(t.agents ?? {}).map(([agent, a]) => ({
      key: `${t.tool}@${agent}`, tool: t.tool, agent, m: a, mode: a.mode, effective: a.effective_mode,
      spot: a.spot_checks,
      atAgent: a.at_agent,
    })),
  ]);
}

function Actions({ row, onChange }: { row: Row; onChange: (c: GatewayModeChange) => void }) {
  const base = { tool: row.tool, ...(row.agent ? { agent: row.agent } : {}) };
  return (
    <ModeActions mode={row.mode} autoReady={!!row.m.auto_ready} name={targetName(row)}
      onMode={(mode, force) => onChange(force ? { ...base, mode, force: true } : { ...base, mode })} />
  );
}

const OUTCOME: Record<string, string> = {
  auto: "is in AUTO: the calls the workspace default would hold are forwarded, but for spot checks.",
  coaching: "is back in coaching: its held calls are reviewed.",
  always_review: "is pinned: every held call is reviewed, whatever the evidence.",
};

/** A gateway tool's regions, read when the lead opens them (one request per tool opened, not per tool listed). */
function ToolRegions({ tool }: { tool: string }) {
  const [open, setOpen] = useState(false);
  const id = `gateway-regions-${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <div className="gateway-regions__tool">
      <button type="button" className="button button--secondary button--small" aria-expanded={open} aria-controls={id}
        onClick={() => setOpen(!open)}>
        {open ? "Hide" : "Show"} the regions of <code>{tool}</code>
      </button>
      {open ? (
        <div id={id}>
          <RegionsSection scope={{ kind: "gateway", tool }} level={4} />
        </div>
      ) : null}
    </div>
  );
}

/** The Tools page's section: the gateway tools' evidence and modes, and the identities' numbers. */
export function GatewayLearningSection() {
  const tools = useGatewayTools(true);
  const setMode = useSetGatewayMode();
  const [asked, setAsked] = useState<GatewayModeChange | null>(null);
  const [reason, setReason] = useState("");
  const [reasonMissing, setReasonMissing] = useState(false);
  const run = (c: GatewayModeChange) => setMode.mutate(c, { onSettled: () => setAsked(null) });
  const change = (c: GatewayModeChange) => {
    setMode.reset();
    setReason("");
    setReasonMissing(false);
    if (c.mode === "auto") setAsked(c);
    else run(c);
  };
  const confirm = (c: GatewayModeChange) => {
    if (c.force && !reason.trim()) {
      setReasonMissing(true);
      document.getElementById("force-reason")?.focus();
      return;
    }
    run(c.force ? { ...c, reason: reason.trim() } : c);
  };
  const items = tools.data?.items ?? [];
  const identities = Object.entries(tools.data?.identities ?? {});
  const columns: Column<Row>[] = [
    {
      header: "Tool",
      rowHeader: true,
      cell: (r) => (r.agent ? <span className="gateway-agent-row">for agent <code>{r.agent}</code></span> : <code>{r.tool}</code>),
    },
    // folded in pairs (the level and AUTO-ready, decisions and acceptance, mode and spot checks) so that the table
    // reads whole at 1280 px (issue #40 item 17)
    {
      header: "Level",
      cell: (r) => (
        <span className="stacked">
          <LevelBadge level={r.m.level} />
          <AutoReadyFlag snapshot={r.m} />
        </span>
      ),
    },
    {
      header: "Decisions",
      cell: (r) => (
        <span className="stacked">
          <span>{formatCount(r.m.decisions)}</span>
          <span className="muted">{formatRate(r.m.acceptance_rate)} accepted</span>
          {r.atAgent?.decisions ? (
            <span className="muted" data-at-agent={r.atAgent.decisions}>
              {formatCount(r.atAgent.decisions)} by the agent's user
            </span>
          ) : null}
        </span>
      ),
    },
    { header: "Statistic", cell: (r) => <Statistic m={r.m} /> },
    {
      header: "Mode",
      cell: (r) => (
        <span className="stacked">
          <span data-gateway-mode={r.mode}>
            {gatewayModeLabel(r.mode, !!r.agent)}
            {r.agent && r.effective !== r.mode ? <span className="muted"> (now {gatewayModeLabel(r.effective)})</span> : null}
          </span>
          <span className="muted">
            Spot checks: <SpotChecks spot={r.spot} />
          </span>
        </span>
      ),
    },
    { header: "Learned rules", cell: (r) => (r.agent ? null : <LearnedRules tool={r.tool} pack={r.pack} />) },
    { header: "Actions", cell: (r) => <Actions row={r} onChange={change} /> },
  ];
  const done = setMode.variables;

  return (
    <section aria-labelledby="gateway-learning-heading" className="gateway-learning">
      <h2 id="gateway-learning-heading">Learning per gateway tool</h2>
      <p className="muted">
        Every decision on an agent's held call counts for its tool and its agent, as a step's decisions do, and so does
        every answer of the person at the agent to a confirm rule's question. A tool whose
        evidence says AUTO-ready may be promoted: the calls the workspace default would hold are then forwarded, but for
        a sample of spot checks{tools.data ? ` (${formatRate(tools.data.spot_check_rate)} unless the tool has its own rate)` : ""};
        rejected spot checks set it back to coaching. A policy rule that denies a call or says a person must review it
        wins over the evidence.
      </p>
      <div className="mode-outcome" role="status">
        {setMode.isSuccess && done ? `${targetName(done)} ${OUTCOME[done.mode] ?? ""}` : null}
      </div>
      {setMode.isError && done ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">Could not set {targetName(done)} to {gatewayModeLabel(done.mode).toLowerCase()}</p>
          <p>{errorMessage(setMode.error)}</p>
        </div>
      ) : null}
      {tools.isPending ? <Loading label="Loading the gateway tools…" /> : null}
      {tools.isError ? <ErrorNotice title="The gateway tools could not be loaded" error={tools.error} /> : null}
      {tools.data && !items.length ? <p className="empty">No gateway tools yet: add an MCP server.</p> : null}
      {items.length ? (
        <DataTable caption="Gateway tools" columns={columns} rows={rowsOf(items)} rowKey={(r) => r.key}
          rowClassName={(r) => [r.agent ? "row--sub" : "", r.m.auto_ready && r.mode === "coaching" ? "row--ready" : ""]
            .filter(Boolean).join(" ") || undefined} />
      ) : null}
      {identities.length ? (
        <DataTable
          caption="Agent identities: their decisions across tools"
          columns={[
            { header: "Agent", rowHeader: true, cell: ([name]) => <code>{name}</code> },
            { header: "Decisions", numeric: true, cell: ([, m]) => formatCount(m.decisions) },
            { header: "Accepted", numeric: true, cell: ([, m]) => formatCount(m.accepted) },
            { header: "Edited", numeric: true, cell: ([, m]) => formatCount(m.corrected) },
            { header: "Rejected", numeric: true, cell: ([, m]) => formatCount(m.rejected) },
            { header: "Acceptance", numeric: true, cell: ([, m]) => formatRate(m.acceptance_rate) },
          ]}
          rows={identities}
          rowKey={([name]) => name}
        />
      ) : null}
      {items.length ? (
        <section aria-labelledby="gateway-regions-heading" className="gateway-regions">
          <h3 id="gateway-regions-heading">Regions of each gateway tool</h3>
          <p className="muted">
            A region is a named condition over a tool's arguments (and the agent) with its own mode and evidence: the
            calls where it holds may run unattended while the tool's other calls are still reviewed.
          </p>
          {items.map((t) => (
            <ToolRegions key={t.tool} tool={t.tool} />
          ))}
        </section>
      ) : null}
      {asked ? (
        <ConfirmDialog
          title={`${asked.force ? "Force" : "Promote"} ${targetName(asked)} ${asked.force ? "into" : "to"} AUTO?`}
          confirmLabel={asked.force ? "Force into AUTO" : "Promote"}
          busy={setMode.isPending}
          onConfirm={() => confirm(asked)}
          onCancel={() => setAsked(null)}
        >
          <p>
            Calls that the workspace default would hold for a review are forwarded without one, except a sample of spot
            checks. Rejected spot checks set it back to coaching. Policy rules still deny or hold what they say.
          </p>
          {asked.force ? (
            <>
              <p className="dialog__warning">Its evidence does not say AUTO-ready: as an admin you may overrule it.</p>
              <ForceReason value={reason} missing={reasonMissing}
                onChange={(v) => { setReason(v); if (v.trim()) setReasonMissing(false); }} />
            </>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
