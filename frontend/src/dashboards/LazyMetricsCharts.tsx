import { lazy, Suspense, type ComponentProps } from "react";
import { Loading } from "../components/QueryState";

// recharts is the biggest part of the lead pages: load it after the tables, in a chunk of its own.
const MetricsCharts = lazy(() => import("./MetricsCharts"));

export function LazyMetricsCharts(props: ComponentProps<typeof MetricsCharts>) {
  return (
    <Suspense fallback={<Loading label="Loading charts…" />}>
      <MetricsCharts {...props} />
    </Suspense>
  );
}
