/**
 * A replay's answer (docs/autonomy.md "Proposals and replay"): what a condition (a region taken as AUTO) or a policy
 * rule being written would have done to the scope's latest decided calls: how many would have run unattended, been
 * denied or still been asked, what the reviewers actually decided on each, and the corrected or rejected calls that
 * would have run unattended, each linked to its execution.
 */
import { Link } from "react-router-dom";
import { DataTable, type Column } from "../dashboards/DataTable";
import { formatCount, formatDateTime, plural } from "../format";
import type { Replay, ReplayLink, Tally } from "./api";

const OUTCOMES = [
  { key: "unattended", label: "Would have run unattended" },
  { key: "denied", label: "Denied by the policy" },
  { key: "asked", label: "Still asked" },
] as const;

type Row = { key: (typeof OUTCOMES)[number]["key"]; label: string; tally: Tally };

const COLUMNS: Column<Row>[] = [
  { header: "Outcome", rowHeader: true, cell: (r) => r.label },
  { header: "Calls", numeric: true, cell: (r) => formatCount(r.tally.calls) },
  { header: "Accepted", numeric: true, cell: (r) => formatCount(r.tally.accepted) },
  { header: "Corrected", numeric: true, cell: (r) => formatCount(r.tally.corrected) },
  { header: "Rejected", numeric: true, cell: (r) => formatCount(r.tally.rejected) },
  { header: "Done by hand", numeric: true, cell: (r) => formatCount(r.tally.manual) },
  { header: "Skipped", numeric: true, cell: (r) => formatCount(r.tally.skipped) },
];

function CallLink({ link }: { link: ReplayLink }) {
  const what = link.decision === "correct" ? "Corrected" : "Rejected";
  const when = link.created_at ? ` ${formatDateTime(link.created_at)}` : "";
  if (link.path && link.execution_id)
    return (
      <>
        {what}
        {when}:{" "}
        <Link to={link.path}>
          execution <code>{link.execution_id}</code>
        </Link>
      </>
    );
  return (
    <>
      {what}
      {when}: {link.agent ? <>call of agent <code>{link.agent}</code>, </> : null}
      review <code>{link.approval_id ?? link.call_id ?? link.decision_id}</code>
    </>
  );
}

/** `subject`: what was replayed, in the caption ("params.amount <= 200", "the rule big refunds"). */
export function ReplayTable({ replay, subject }: { replay: Replay; subject: string }) {
  const rows: Row[] = OUTCOMES.map((o) => ({ ...o, tally: replay[o.key] }));
  const failed = replay.condition_failed ?? replay.rule_failed;
  const risky = replay.unattended.corrected + replay.unattended.rejected;
  return (
    <div className="replay" data-replay-calls={replay.calls}>
      {replay.calls === 0 ? (
        <p className="muted">No decided call to replay yet: nothing shows what {subject} would have done.</p>
      ) : (
        <>
          <p>
            Replayed the latest {plural(replay.calls, "decided call")}
            {replay.calls >= replay.limit ? ` (at most ${formatCount(replay.limit)})` : ""}
            {replay.in_region !== undefined ? (
              <>
                : the condition holds for <strong data-in-region={replay.in_region}>{formatCount(replay.in_region)}</strong>
              </>
            ) : null}
            {replay.matched !== undefined ? (
              <>
                : the rule decides <strong data-matched={replay.matched}>{formatCount(replay.matched)}</strong> and
                changes the outcome of <strong>{formatCount(replay.changed ?? 0)}</strong>
              </>
            ) : null}
            .{" "}
            {risky ? (
              <strong className="replay__warning">
                {plural(risky, "call")} reviewers corrected or rejected would have run unattended.
              </strong>
            ) : replay.unattended.calls ? (
              <>Every call that would have run unattended was accepted as it was.</>
            ) : null}
          </p>
          {failed && failed.calls ? (
            <p className="muted">
              It failed on {plural(failed.calls, "call")}
              {failed.first_error ? <> (first: {failed.first_error})</> : null}: those are asked (fail closed).
            </p>
          ) : null}
          <DataTable caption={`Replay of ${subject}: what reviewers decided on each outcome`} columns={COLUMNS} rows={rows}
            rowKey={(r) => r.key} />
          {replay.links.length ? (
            <>
              <p className="replay__links-title">Corrected or rejected calls that would have run unattended:</p>
              <ul className="replay__links">
                {replay.links.map((l, i) => (
                  <li key={l.decision_id ?? l.approval_id ?? i} data-decision={l.decision}>
                    <CallLink link={l} />
                  </li>
                ))}
                {replay.links_left_off ? <li className="muted">and {plural(replay.links_left_off, "more")}</li> : null}
              </ul>
            </>
          ) : null}
          <p className="muted">A replay is never evidence: a region counts only the decisions made after it is saved.</p>
        </>
      )}
    </div>
  );
}
