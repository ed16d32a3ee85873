/**
 * A workflow's level, AUTO-readiness and mode: always words and a symbol, colour only repeats them. The level is
 * what the evidence says (AUTO means "AUTO-ready"), the mode what a lead chose: they are shown apart, so a
 * workflow still in coaching never reads as running in AUTO.
 */
import { formatRate, plural } from "../format";
import type { Level, MetricsSnapshot, WorkflowMode } from "../api/metrics";

const LEVELS: Record<string, { label: string; symbol: string; tone: string }> = {
  OBSERVATION: { label: "Observation", symbol: "○", tone: "neutral" },
  COACHING: { label: "Coaching", symbol: "◐", tone: "info" },
  AUTO: { label: "AUTO-ready", symbol: "●", tone: "success" },
};

/** A difference of two rates in percentage points ("10 points", "0.5 points"). */
function formatPoints(difference: number): string {
  const points = Math.round(difference * 1000) / 10;
  return `${points} ${points === 1 ? "point" : "points"}`;
}

/** A level in words; also one an error's details name (a string the server wrote). */
export function levelLabel(level: string): string {
  return LEVELS[level]?.label ?? level;
}

export function LevelBadge({ level }: { level: Level }) {
  const known = LEVELS[level];
  return (
    <span className={`status status--${known?.tone ?? "neutral"}`} data-level={level}>
      <span className="status__symbol" aria-hidden="true">
        {known?.symbol ?? "•"}
      </span>
      {levelLabel(level)}
    </span>
  );
}

export function modeLabel(mode: WorkflowMode): string {
  return mode === "auto" ? "AUTO" : mode === "coaching" ? "Coaching" : mode === "always_review" ? "Always review" : mode;
}

/** What still stands between a scope and AUTO-ready, in words ("" when nothing does). */
export function autoReadyGap(snapshot: Pick<MetricsSnapshot, "auto_ready" | "to_auto" | "evidence">): string {
  const gap = snapshot.to_auto;
  if (snapshot.auto_ready || !gap) return "";
  const parts: string[] = [];
  if (gap.decisions_to_coaching > 0) parts.push(`${plural(gap.decisions_to_coaching, "more decision")} to leave observation`);
  if (gap.window_decisions_needed > 0) parts.push(`${plural(gap.window_decisions_needed, "more counted decision")} in the window`);
  const needed = snapshot.evidence?.decisions_needed_if_all_accepted;
  if (snapshot.evidence && needed !== undefined) {
    // the sequential test (docs/autonomy.md): how far the evidence is from AUTO-ready, in accepts
    if (needed === null) parts.push(`acceptance at the ${formatRate(gap.auto_acceptance)} bar cannot be shown`);
    else if (needed > 0) parts.push(`about ${plural(needed, "more accept")} in a row`);
  } else if (gap.acceptance_gap > 0) {
    // a distance to the bar, not the acceptance itself: "51.7% under the 85% bar" read as an acceptance of 51.7%
    parts.push(
      `acceptance to rise ${formatPoints(gap.acceptance_gap)} to reach the ${formatRate(gap.auto_acceptance)} bar`,
    );
  }
  return parts.length ? `Needs ${parts.join("; ")}` : "";
}

/** "✓ AUTO-ready", or "✕ Not ready" with what is missing. */
export function AutoReadyFlag({ snapshot }: { snapshot: Pick<MetricsSnapshot, "auto_ready" | "to_auto" | "evidence"> }) {
  if (snapshot.auto_ready) {
    return (
      <span className="status status--success" data-auto-ready="true">
        <span className="status__symbol" aria-hidden="true">
          ✓
        </span>
        AUTO-ready
      </span>
    );
  }
  const gap = autoReadyGap(snapshot);
  return (
    <span className="auto-flag" data-auto-ready="false">
      <span className="status status--muted">
        <span className="status__symbol" aria-hidden="true">
          ✕
        </span>
        Not ready
      </span>
      {gap ? <span className="auto-flag__gap">{gap}</span> : null}
    </span>
  );
}
