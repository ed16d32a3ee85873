/**
 * Per-step autonomy (docs/design.md#metrics-and-learning-levels): each tool step's level, evidence, spot checks and own mode, with the
 * actions a lead takes on one step: promote it to AUTO alone, set it back to coaching, pin it to
 * always_review (no promotion overrides a pin) or unpin it: the buttons are ModeActions, as a region's and a gateway
 * tool's. Buttons, so every action is keyboard reachable.
 */
import { useState, type ReactNode } from "react";
import { Link } from "react-router-dom";
import { errorMessage } from "../api/client";
import type { StepMetrics, StepMode } from "../api/metrics";
import { formatCount, formatRate } from "../format";
import { AutoReadyFlag, LevelBadge } from "./Badges";
import { useIsLead } from "../auth/useAuth";
import { ModeActions } from "./ModeActions";
import { ConfirmDialog } from "./ConfirmDialog";
import { ForceReason } from "./ForceReason";
import { DataTable, type Column } from "./DataTable";
import { useSetStepMode, type StepModeChange } from "./queries";

/** One tool step of one workflow, as the table shows it. */
export interface StepRow {
  workflowId: string;
  workflowName: string;
  stepId: string;
  mode: StepMode;
  metrics?: StepMetrics;
}

export function stepModeLabel(mode: StepMode): string {
  return mode === "auto" ? "AUTO (this step alone)" : mode === "always_review" ? "Always reviewed (pinned)" : "Follows the workflow";
}

const OUTCOME: Record<string, string> = {
  auto: "is now in AUTO: it runs unattended, with spot checks, while the workflow's other steps are still suggested.",
  coaching: "follows its workflow's mode again.",
  always_review: "is pinned: every run of it is decided by a person, whatever the workflow's mode.",
};

/** The state of a page's step-mode changes: `change(...)` (promotions ask first) and the outcome region. */
export function useStepModeChanger(): { change: (c: StepModeChange) => void; ui: ReactNode } {
  const setMode = useSetStepMode();
  const [asked, setAsked] = useState<StepModeChange | null>(null);
  const [reason, setReason] = useState("");
  const [reasonMissing, setReasonMissing] = useState(false);
  const run = (c: StepModeChange) => setMode.mutate(c, { onSettled: () => setAsked(null) });
  const change = (c: StepModeChange) => {
    setMode.reset();
    setReason("");
    setReasonMissing(false);
    if (c.mode === "auto") setAsked(c);
    else run(c);
  };
  const confirm = (c: StepModeChange) => {
    if (c.force && !reason.trim()) {
      setReasonMissing(true);
      document.getElementById("force-reason")?.focus();
      return;
    }
    run(c.force ? { ...c, reason: reason.trim() } : c);
  };
  const done = setMode.variables;
  const ui = (
    <>
      <div className="mode-outcome" role="status">
        {setMode.isSuccess && done ? `Step “${done.stepId}” of “${done.workflowName}” ${OUTCOME[done.mode] ?? ""}` : null}
      </div>
      {setMode.isError && done ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">
            Could not set step “{done.stepId}” of “{done.workflowName}” to {stepModeLabel(done.mode).toLowerCase()}
          </p>
          <p>{errorMessage(setMode.error)}</p>
        </div>
      ) : null}
      {asked ? (
        <ConfirmDialog
          title={`${asked.force ? "Force" : "Promote"} step “${asked.stepId}” of “${asked.workflowName}” ${asked.force ? "into" : "to"} AUTO?`}
          confirmLabel={asked.force ? "Force the step into AUTO" : "Promote the step"}
          busy={setMode.isPending}
          onConfirm={() => confirm(asked)}
          onCancel={() => setAsked(null)}
        >
          <p>
            This step will run unattended, with a sample of spot checks, while the workflow's other steps are still
            suggested. Falling spot-check acceptance sets it back to coaching.
          </p>
          {asked.force ? (
            <>
              <p className="dialog__warning">Its evidence does not say AUTO-ready: as an admin you may overrule it.</p>
              <ForceReason
                value={reason}
                missing={reasonMissing}
                onChange={(v) => {
                  setReason(v);
                  if (v.trim()) setReasonMissing(false);
                }}
              />
            </>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
  return { change, ui };
}

function StepActions({ row, onChange }: { row: StepRow; onChange: (c: StepModeChange) => void }) {
  const base = { workflowId: row.workflowId, workflowName: row.workflowName, stepId: row.stepId };
  return (
    <ModeActions mode={row.mode} autoReady={!!row.metrics?.auto_ready} name={`${row.stepId} of ${row.workflowName}`}
      onMode={(mode, force) => onChange(force ? { ...base, mode, force: true } : { ...base, mode })} />
  );
}

function SpotChecks({ m }: { m?: StepMetrics }) {
  const spot = m?.spot_checks;
  if (!spot || !spot.decisions) return <span className="muted">none</span>;
  return (
    <>
      {formatCount(spot.decisions)}, {formatRate(spot.acceptance_rate)} accepted
    </>
  );
}

/** The steps' table; `withWorkflow` adds the workflow's name (the dashboard lists steps of every workflow). */
export function StepModesTable({
  caption,
  rows,
  onChange,
  withWorkflow = false,
}: {
  caption: string;
  rows: StepRow[];
  onChange: (c: StepModeChange) => void;
  withWorkflow?: boolean;
}) {
  const lead = useIsLead(); // promote / unpin / pin a step: a lead's buttons
  const columns: Column<StepRow>[] = [
    ...(withWorkflow
      ? [{ header: "Workflow", cell: (r: StepRow) => <Link to={`/workflows/${encodeURIComponent(r.workflowId)}`}>{r.workflowName}</Link> }]
      : []),
    { header: "Step", rowHeader: true, cell: (r) => <code>{r.stepId}</code> },
    { header: "Level", cell: (r) => (r.metrics ? <LevelBadge level={r.metrics.level} /> : <span className="muted">no decisions</span>) },
    { header: "AUTO-ready", cell: (r) => (r.metrics ? <AutoReadyFlag snapshot={r.metrics} /> : <span className="muted">—</span>) },
    { header: "Decisions", numeric: true, cell: (r) => formatCount(r.metrics?.decisions ?? 0) },
    { header: "Spot checks", cell: (r) => <SpotChecks m={r.metrics} /> },
    { header: "Mode", cell: (r) => <span data-step-mode={r.mode}>{stepModeLabel(r.mode)}</span> },
    ...(lead ? [{ header: "Actions", cell: (r: StepRow) => <StepActions row={r} onChange={onChange} /> }] : []),
  ];
  return (
    <DataTable
      caption={caption}
      showCaption
      columns={columns}
      rows={rows}
      rowKey={(r) => `${r.workflowId}/${r.stepId}`}
      rowClassName={(r) => (r.metrics?.auto_ready && r.mode === "coaching" ? "row--ready" : undefined)}
    />
  );
}
