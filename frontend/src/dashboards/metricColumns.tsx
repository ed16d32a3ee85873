/** Table columns for a scope's counters and rates, shared by the workflow, step and operator tables. */
import type { Column } from "./DataTable";
import { formatCount, formatLatencyPair, formatRate } from "../format";
import type { MetricsTotals } from "../api/metrics";

export type MetricColumn =
  | "decisions"
  | "accepted"
  | "rejected"
  | "corrected"
  | "manual"
  | "skipped"
  | "acceptance"
  | "rolling"
  | "confidence"
  | "latency";

function count(header: string, pick: (s: MetricsTotals) => number): Column<MetricsTotals> {
  return { header, numeric: true, cell: (s) => formatCount(pick(s)) };
}

const COLUMNS: Record<MetricColumn, Column<MetricsTotals>> = {
  decisions: count("Decisions", (s) => s.decisions),
  accepted: count("Accepted", (s) => s.accepted),
  rejected: count("Rejected", (s) => s.rejected),
  corrected: count("Corrections", (s) => s.corrected),
  manual: count("Manual", (s) => s.manual),
  skipped: count("Skipped", (s) => s.skipped),
  acceptance: { header: "Acceptance", numeric: true, cell: (s) => formatRate(s.acceptance_rate) },
  rolling: {
    header: (
      <>
        Rolling <span className="cell-note">acceptance</span>
      </>
    ),
    numeric: true,
    cell: (s) => (
      <>
        {formatRate(s.rolling_acceptance_rate)}
        <span className="cell-note">
          last {formatCount(s.window_decisions)}/{formatCount(s.window_size)}
        </span>
      </>
    ),
  },
  confidence: {
    header: (
      <abbr title="95% Wilson lower bound of the rolling acceptance: the acceptance we are confident of">
        Confidence
      </abbr>
    ),
    numeric: true,
    cell: (s) => formatRate(s.confidence),
  },
  latency: {
    header: (
      <>
        Latency <span className="cell-note">median / p90</span>
      </>
    ),
    numeric: true,
    cell: (s) => formatLatencyPair(s.decision_latency_ms),
  },
};

export function metricColumns<T extends MetricsTotals>(names: MetricColumn[]): Column<T>[] {
  return names.map((name) => COLUMNS[name] as Column<T>);
}
