/**
 * Acceptance over time and decision latency, drawn with recharts. The
 * drawings are for the eye (hidden from assistive tech); each figure's
 * caption sums it up and its table holds every point, for everyone.
 */
import { useId } from "react";
import { Bar, BarChart, CartesianGrid, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { DataTable, type Column } from "./DataTable";
import { formatBucket, formatCount, formatMs, formatRate, plural } from "../format";
import type { SeriesPoint } from "../api/metrics";

interface Point {
  bucket: string;
  label: string;
  acceptance: number;
  latency: number | null;
  point: SeriesPoint;
}

const CHART_STYLE = { width: "100%", height: 240 } as const;
const AXIS_TICK = { fontSize: 12, fill: "#57606a" } as const;

function toPoints(series: SeriesPoint[]): Point[] {
  return series.map((point) => ({
    bucket: point.bucket,
    label: formatBucket(point.bucket),
    acceptance: Math.round(point.acceptance_rate * 1000) / 10,
    latency: point.latency_ms_avg,
    point,
  }));
}

/** One sentence saying what the acceptance chart shows. */
export function acceptanceSummary(series: SeriesPoint[]): string {
  if (!series.length) return "No decisions in the last 14 days.";
  const first = series[0]!;
  const last = series[series.length - 1]!;
  const decisions = series.reduce((n, p) => n + p.decisions, 0);
  if (series.length === 1)
    return `${plural(decisions, "decision")} in one hour (${formatBucket(first.bucket)}), ${formatRate(first.acceptance_rate)} accepted.`;
  return (
    `${plural(decisions, "decision")} over ${series.length} hours with activity: acceptance went from ` +
    `${formatRate(first.acceptance_rate)} (${formatBucket(first.bucket)}) to ${formatRate(last.acceptance_rate)} ` +
    `(${formatBucket(last.bucket)}).`
  );
}

/** One sentence saying what the latency chart shows. */
export function latencySummary(series: SeriesPoint[]): string {
  const timed = series.filter((p) => p.latency_ms_avg != null);
  if (!timed.length) return "No decision latency recorded in the last 14 days.";
  const values = timed.map((p) => p.latency_ms_avg!);
  return (
    `Average time from suggestion to decision per hour, between ${formatMs(Math.min(...values))} and ` +
    `${formatMs(Math.max(...values))}; latest ${formatMs(values[values.length - 1])}.`
  );
}

const columns: Column<Point>[] = [
  { header: "Hour", rowHeader: true, cell: (p) => <time dateTime={p.bucket}>{p.label}</time> },
  { header: "Decisions", numeric: true, cell: (p) => formatCount(p.point.decisions) },
  { header: "Accepted", numeric: true, cell: (p) => formatCount(p.point.accepted) },
  { header: "Rejected", numeric: true, cell: (p) => formatCount(p.point.rejected) },
  { header: "Corrected", numeric: true, cell: (p) => formatCount(p.point.corrected) },
  { header: "Manual", numeric: true, cell: (p) => formatCount(p.point.manual) },
  { header: "Skipped", numeric: true, cell: (p) => formatCount(p.point.skipped) },
  { header: "Acceptance", numeric: true, cell: (p) => formatRate(p.point.acceptance_rate) },
  { header: "Average latency", numeric: true, cell: (p) => formatMs(p.latency) },
];

/** Both charts for one series, and the table of its points. */
export function MetricsCharts({ series, scope, autoBar }: { series: SeriesPoint[]; scope: string; autoBar?: number }) {
  const points = toPoints(series);
  const id = useId();
  return (
    <div className="charts">
      <figure className="chart" aria-labelledby={`${id}-acceptance`}>
        <figcaption id={`${id}-acceptance`}>
          <span className="chart__title">Acceptance over time — {scope}</span>
          <span className="chart__summary">{acceptanceSummary(series)}</span>
        </figcaption>
        {points.length ? (
          <div className="chart__drawing" aria-hidden="true">
            <LineChart data={points} responsive style={CHART_STYLE} accessibilityLayer={false}>
              <CartesianGrid strokeDasharray="3 3" stroke="#d0d7de" />
              <XAxis dataKey="label" tick={AXIS_TICK} minTickGap={24} />
              <YAxis domain={[0, 100]} unit="%" tick={AXIS_TICK} width={48} />
              <Tooltip formatter={(value) => [`${value}%`, "Acceptance"]} />
              {autoBar != null ? (
                <ReferenceLine
                  y={autoBar * 100}
                  stroke="#146c2e"
                  strokeDasharray="6 4"
                  label={{ value: `AUTO bar ${formatRate(autoBar)}`, position: "insideBottomRight", fontSize: 12 }}
                />
              ) : null}
              <Line type="monotone" dataKey="acceptance" stroke="#0b5cad" strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} />
            </LineChart>
          </div>
        ) : null}
      </figure>
      <figure className="chart" aria-labelledby={`${id}-latency`}>
        <figcaption id={`${id}-latency`}>
          <span className="chart__title">Decision latency — {scope}</span>
          <span className="chart__summary">{latencySummary(series)}</span>
        </figcaption>
        {points.some((p) => p.latency != null) ? (
          <div className="chart__drawing" aria-hidden="true">
            <BarChart data={points} responsive style={CHART_STYLE} accessibilityLayer={false}>
              <CartesianGrid strokeDasharray="3 3" stroke="#d0d7de" vertical={false} />
              <XAxis dataKey="label" tick={AXIS_TICK} minTickGap={24} />
              <YAxis tick={AXIS_TICK} width={64} tickFormatter={(v: number) => formatMs(v)} />
              <Tooltip formatter={(value) => [formatMs(Number(value)), "Average latency"]} />
              <Bar dataKey="latency" fill="#5b3cc4" isAnimationActive={false} />
            </BarChart>
          </div>
        ) : null}
      </figure>
      {points.length ? (
        <details className="chart-data">
          <summary>Show the charts' data as a table</summary>
          <DataTable
            caption={`Decisions per hour — ${scope}`}
            showCaption
            columns={columns}
            rows={points}
            rowKey={(p) => p.bucket}
          />
        </details>
      ) : null}
    </div>
  );
}

export default MetricsCharts;
