import { Loading } from "../components/QueryState";
import { DataTable, type Column } from "./DataTable";
import { metricColumns } from "./metricColumns";
import { useOperatorMetrics } from "./queries";
import { SectionError } from "./SectionError";
import type { OperatorMetrics } from "./types";

const columns: Column<OperatorMetrics>[] = [
  { header: "Operator", rowHeader: true, cell: (o) => o.operator },
  ...metricColumns<OperatorMetrics>(["decisions", "accepted", "corrected", "rejected", "acceptance", "latency"]),
];

/** Per-operator decisions, acceptance, corrections and latency (leads only). */
export function OperatorsTable() {
  const operators = useOperatorMetrics();
  if (operators.isPending) return <Loading label="Loading operators…" />;
  if (operators.isError)
    return (
      <SectionError
        title="Could not load the operators' metrics"
        what="Per-operator metrics"
        error={operators.error}
        onRetry={() => void operators.refetch()}
      />
    );
  if (!operators.data.items.length) return <p className="empty">No operator has decided anything yet.</p>;
  return (
    <DataTable
      caption={`Decisions per operator, ${operators.data.items.length} in total`}
      columns={columns}
      rows={operators.data.items}
      rowKey={(o) => o.operator}
    />
  );
}
