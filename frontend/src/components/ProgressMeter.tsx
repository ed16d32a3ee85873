import type { ExecutionProgress } from "../api/types";

/** Steps done out of total, as text and as a native progress bar. */
export function ProgressMeter({ progress, label }: { progress: ExecutionProgress; label: string }) {
  const total = Math.max(0, progress.total);
  const done = Math.min(Math.max(0, progress.done), total || progress.done);
  const percent = Math.round(Number.isFinite(progress.percent) ? progress.percent : total ? (done / total) * 100 : 0);
  return (
    <span className="progress">
      <progress max={100} value={percent} aria-label={label} />
      <span className="progress__text">
        {done} / {total} steps ({percent}%)
      </span>
    </span>
  );
}
