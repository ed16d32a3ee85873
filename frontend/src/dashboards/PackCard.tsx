import { useState } from "react";
import { useIsLead } from "../auth/useAuth";
import { Link } from "react-router-dom";
import { errorMessage } from "../api/client";
import { DataTable, type Column } from "./DataTable";
import { downloadJson, slug } from "./download";
import { formatCount, formatDateTime, formatPackValue, formatRate, plural } from "../format";
import { ConfirmDialog } from "./ConfirmDialog";
import { fetchPackExport, useRemovePackChange, useSetPackEnabled } from "./queries";
import type { CorrectionPack, LearnedRuleRef, PackChange } from "./types";

type ChangeRow = PackChange & { learned: boolean; share: number };

function changeRows(pack: CorrectionPack): ChangeRow[] {
  const learned = new Set(pack.rules.map((r) => JSON.stringify([r.field, r.before, r.after])));
  return pack.changes.map((change) => ({
    ...change,
    learned: learned.has(JSON.stringify([change.field, change.before, change.after])),
    share: shareOf(pack, change),
  }));
}

/** Consistency is judged among the corrections that changed the same field (the server's field_corrections). */
function shareOf(pack: CorrectionPack, change: PackChange): number {
  const among = pack.field_corrections?.[change.field] ?? pack.corrections;
  return among ? change.count / among : 0;
}

function describeRules(rules: LearnedRuleRef[]): string {
  return rules.map((r) => `${r.field} ${formatPackValue(r.before)} → ${formatPackValue(r.after)}`).join(", ");
}

/** "Rule started applying at …" / "stopped applying at …": what an AUTO run of this step books changed then. */
function RuleChangeNote({ pack }: { pack: CorrectionPack }) {
  const change = pack.last_rule_change;
  if (!change || (!change.started.length && !change.stopped.length)) return null;
  const when = formatDateTime(change.at);
  return (
    <p className="pack__meta pack__rule-change" data-testid="rule-change">
      {change.started.length ? (
        <>
          {change.started.length === 1 ? "Rule" : "Rules"} started applying at {when}: {describeRules(change.started)}.
        </>
      ) : null}
      {change.started.length && change.stopped.length ? " " : null}
      {change.stopped.length ? (
        <>
          {change.stopped.length === 1 ? "Rule" : "Rules"} stopped applying at {when}: {describeRules(change.stopped)}.
        </>
      ) : null}
    </p>
  );
}

const describeChange = (c: Pick<PackChange, "field" | "before" | "after">) => `${c.field}: ${formatPackValue(c.before)} → ${formatPackValue(c.after)}`;

const columns: Column<ChangeRow>[] = [
  { header: "Field", rowHeader: true, cell: (c) => <code className="value">{c.field}</code> },
  {
    header: "Change",
    cell: (c) => (
      <>
        <span className="value">{formatPackValue(c.before)}</span>
        <span className="arrow" aria-hidden="true">
          →
        </span>
        <span className="visually-hidden"> becomes </span>
        <span className="value">{formatPackValue(c.after)}</span>
      </>
    ),
  },
  { header: "Count", numeric: true, cell: (c) => formatCount(c.count) },
  {
    header: (
      <abbr title="Share of this step's corrections of this field that made this change; 80% and 3 times make a learned rule">
        Consistency
      </abbr>
    ),
    numeric: true,
    cell: (c) => formatRate(c.share),
  },
  {
    header: "Learned rule",
    cell: (c) =>
      c.learned ? (
        <span className="status status--success">
          <span aria-hidden="true">✓</span> Learned rule
        </span>
      ) : (
        <span className="muted">Not yet</span>
      ),
  },
];

/** One step's pack: what operators changed, what Coach learned, and the lead's controls. */
export function PackCard({ pack, workflowName, linked }: { pack: CorrectionPack; workflowName: string; linked: boolean }) {
  const toggle = useSetPackEnabled();
  const lead = useIsLead(); // enable, disable and export are a lead's (the server refuses operators)
  const [exported, setExported] = useState<{ ok: true; file: string } | { ok: false; error: unknown } | null>(null);
  const removal = useRemovePackChange();
  const [removing, setRemoving] = useState<ChangeRow | null>(null);
  const removed = removal.variables?.change;
  const tableColumns: Column<ChangeRow>[] = lead
    ? [
        ...columns,
        {
          header: "Remove",
          cell: (c) => (
            <button
              type="button"
              className="button button--secondary button--small"
              data-remove-change={c.field}
              onClick={() => {
                removal.reset();
                setRemoving(c);
              }}
            >
              Remove <span className="visually-hidden">the change {describeChange(c)} from the pack of {stepName}</span>
            </button>
          ),
        },
      ]
    : columns;
  const headingId = `pack-${pack.id}-heading`;
  const stepName = `step ${pack.step_id} of ${workflowName}`;

  const exportPack = async () => {
    try {
      const body = await fetchPackExport(pack.id);
      const file = `correction-pack-${slug(workflowName)}-${slug(pack.step_id)}.json`;
      downloadJson(file, body);
      setExported({ ok: true, file });
    } catch (error) {
      setExported({ ok: false, error });
    }
  };

  return (
    <article
      id={`pack-${pack.id}`}
      className={`pack${pack.enabled ? " pack--enabled" : ""}${linked ? " pack--linked" : ""}`}
      aria-labelledby={headingId}
      tabIndex={-1}
      data-pack-id={pack.id}
    >
      <div className="pack__head">
        <div>
          <h3 id={headingId}>
            Step <code>{pack.step_id}</code>
            {linked ? <span className="tag">linked from a suggestion</span> : null}
          </h3>
          <p className="pack__meta">
            {plural(pack.corrections, "correction")} · {plural(pack.rules.length, "learned rule")}
            {pack.updated_at ? <> · updated {formatDateTime(pack.updated_at)}</> : null}
          </p>
          {pack.discounted ? (
            <p className="pack__meta" data-testid="discounted">
              {plural(pack.discounted, "correction")} not counted: the step failed because of{" "}
              {pack.discounted === 1 ? "it" : "them"}.
            </p>
          ) : null}
          <RuleChangeNote pack={pack} />
        </div>
        <div className="pack__actions">
          <span className={`status ${pack.enabled ? "status--success" : "status--muted"}`} data-enabled={pack.enabled}>
            <span aria-hidden="true">{pack.enabled ? "✓" : "⊘"}</span>
            {pack.enabled ? "Enabled" : "Disabled"}
          </span>
          {lead ? (
            <>
            <button
              type="button"
              className="button button--secondary"
              // aria-disabled, not disabled: a disabled button drops the keyboard focus.
              onClick={() => !toggle.isPending && toggle.mutate({ pack, enabled: !pack.enabled })}
              aria-disabled={toggle.isPending || undefined}
              aria-busy={toggle.isPending || undefined}
            >
              {pack.enabled ? "Disable" : "Enable"} <span className="visually-hidden">the pack of {stepName}</span>
            </button>
            <button type="button" className="button button--secondary" onClick={() => void exportPack()}>
              Export JSON <span className="visually-hidden">of the pack of {stepName}</span>
            </button>
            </>
          ) : null}
        </div>
      </div>
      <div role="status" className="pack__status">
        {removal.isSuccess && removed
          ? `Removed ${describeChange(removed)} from the pack of ${stepName}: it counts towards no learned rule.`
          : toggle.isSuccess
          ? `The pack of ${stepName} is ${toggle.data.enabled ? "enabled: its learned rules apply to new suggestions" : "disabled: suggestions ignore it"}.`
          : exported?.ok
            ? `Exported as ${exported.file}.`
            : null}
      </div>
      {toggle.isError ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">Could not {toggle.variables?.enabled ? "enable" : "disable"} the pack</p>
          <p>{errorMessage(toggle.error)}</p>
        </div>
      ) : null}
      {removal.isError ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">Could not remove the change</p>
          <p>{errorMessage(removal.error)}</p>
        </div>
      ) : null}
      {removing ? (
        <ConfirmDialog
          title="Remove this change from the pack?"
          confirmLabel="Remove the change"
          cancelLabel="Keep it"
          busy={removal.isPending}
          onConfirm={() => removal.mutate({ pack, change: removing }, { onSettled: () => setRemoving(null) })}
          onCancel={() => setRemoving(null)}
        >
          <p>
            <code>{describeChange(removing)}</code>, made {plural(removing.count, "time")} at {stepName}, will no longer
            count towards a learned rule{removing.learned ? " (its rule stops applying)" : ""}. The removal is recorded
            in the audit log.
          </p>
        </ConfirmDialog>
      ) : null}
      {exported && !exported.ok ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">Could not export the pack</p>
          <p>{errorMessage(exported.error)}</p>
        </div>
      ) : null}
      {pack.changes.length ? (
        <DataTable
          caption={`Changes operators made at ${stepName}`}
          columns={tableColumns}
          rows={changeRows(pack)}
          rowKey={(c) => JSON.stringify([c.field, c.before, c.after])}
        />
      ) : (
        <p className="empty">These corrections changed no parameter.</p>
      )}
      <p className="pack__meta">
        <Link to={`/workflows/${encodeURIComponent(pack.workflow_id)}`}>Definition of {workflowName}</Link>
      </p>
    </article>
  );
}
