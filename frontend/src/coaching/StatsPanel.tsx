import { memo } from "react";
import { ErrorNotice, Loading } from "../components/QueryState";
import { formatRate, plural } from "../format";
import type { WorkflowMetrics } from "../api/metrics";
import { levelLabel, modeLabel } from "../dashboards/Badges";
import type { CoachingStats } from "./types";

const EXECUTION_ROWS: { key: keyof CoachingStats; label: string }[] = [
  { key: "suggestions_made", label: "Suggestions" },
  { key: "accepted", label: "Accepted" },
  { key: "rejected", label: "Rejected" },
  { key: "corrected", label: "Corrected" },
  { key: "manual_executions", label: "Manual" },
  { key: "skipped", label: "Skipped" },
  { key: "timed_out", label: "Timed out" },
];

/** What still stands between the workflow and AUTO-ready, in words. */
export function toAutoLines(metrics: WorkflowMetrics): string[] {
  if (metrics.auto_ready) {
    return [metrics.mode === "auto" ? "Runs in AUTO." : "Ready for AUTO: a lead can promote it."];
  }
  const to = metrics.to_auto;
  if (!to) return [];
  const lines: string[] = [];
  if (to.decisions_to_coaching > 0) {
    lines.push(`${plural(to.decisions_to_coaching, "more decision")} to leave OBSERVATION.`);
  }
  if (to.window_decisions_needed > 0) {
    lines.push(
      `${plural(to.window_decisions_needed, "more decision")} in the rolling window ` +
        `(AUTO needs ${to.auto_min_window}; skips do not count).`,
    );
  }
  const needed = metrics.evidence?.decisions_needed_if_all_accepted;
  if (metrics.evidence && needed !== undefined) {
    if (needed === null) lines.push(`Acceptance of ${formatRate(to.auto_acceptance, 0)} cannot be shown at this setting.`);
    else if (needed > 0) lines.push(`About ${plural(needed, "more accept")} in a row would make it AUTO-ready.`);
  } else if (to.acceptance_gap > 0) {
    lines.push(
      `Rolling acceptance ${formatRate(metrics.rolling_acceptance_rate, 0)} of ${formatRate(to.auto_acceptance, 0)} needed.`,
    );
  }
  return lines;
}

/** This execution's decisions and the workflow's learning level, both updated live. */
export const StatsPanel = memo(function StatsPanel({
  stats,
  metrics,
  metricsError,
  onRetryMetrics,
}: {
  stats: CoachingStats | undefined;
  metrics: WorkflowMetrics | undefined;
  metricsError: unknown;
  onRetryMetrics: () => void;
}) {
  return (
    <aside className="card stats" aria-labelledby="stats-heading">
      <h2 id="stats-heading">Stats</h2>
      <h3 id="stats-execution-heading">This execution</h3>
      {stats ? (
        <dl className="stats__grid" aria-labelledby="stats-execution-heading" data-testid="execution-stats">
          {EXECUTION_ROWS.map((row) => (
            <div key={row.key}>
              <dt>{row.label}</dt>
              <dd>{stats[row.key] ?? 0}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <Loading label="Loading stats…" />
      )}

      <h3 id="stats-workflow-heading">Workflow</h3>
      {metrics ? (
        <>
          <dl className="stats__grid" aria-labelledby="stats-workflow-heading" data-testid="workflow-stats">
            <div>
              <dt>Level</dt>
              <dd>
                {/* the level says what the evidence shows (AUTO is "AUTO-ready"); the mode, what a lead chose */}
                <span className={`level level--${metrics.level.toLowerCase()}`}>{levelLabel(metrics.level)}</span>
                {metrics.mode ? <span className="tag">{modeLabel(metrics.mode)} mode</span> : null}
              </dd>
            </div>
            <div>
              <dt>Decisions</dt>
              <dd>{metrics.decisions}</dd>
            </div>
            <div>
              <dt>Acceptance</dt>
              <dd>{formatRate(metrics.acceptance_rate, 0)}</dd>
            </div>
            <div>
              <dt>Rolling acceptance</dt>
              <dd>
                {formatRate(metrics.rolling_acceptance_rate, 0)}
                {metrics.window_size ? (
                  <span className="muted"> (last {Math.min(metrics.window_decisions ?? 0, metrics.window_size)})</span>
                ) : null}
              </dd>
            </div>
            <div>
              <dt>Confidence</dt>
              <dd>{formatRate(metrics.confidence, 0)}</dd>
            </div>
          </dl>
          <h4 className="stats__subhead">How far from AUTO-ready</h4>
          <ul className="stats__to-auto" data-testid="to-auto">
            {toAutoLines(metrics).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      ) : metricsError ? (
        <ErrorNotice title="Could not load the workflow's metrics" error={metricsError} onRetry={onRetryMetrics} />
      ) : (
        <Loading label="Loading workflow metrics…" />
      )}
    </aside>
  );
});
