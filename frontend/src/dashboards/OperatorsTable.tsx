import { DataTable, type Column } from "./DataTable";
import { metricColumns } from "./metricColumns";
import { useOperatorMetrics } from "./queries";
import { QuerySection } from "./SectionError";
import type { OperatorMetrics } from "../api/metrics";

const columns: Column<OperatorMetrics>[] = [
  { header: "Operator", rowHeader: true, cell: (o) => o.operator },
  ...metricColumns<OperatorMetrics>(["decisions", "accepted", "corrected", "rejected", "acceptance", "latency"]),
];

/** Per-operator decisions, acceptance, corrections and latency (leads only). */
export function OperatorsTable() {
  return (
    <QuerySection
      query={useOperatorMetrics()}
      loading="Loading operators…"
      title="Could not load the operators' metrics"
      what="Per-operator metrics"
    >
      {({ items }) =>
        items.length ? (
          <DataTable
            caption={`Decisions per operator, ${items.length} in total`}
            columns={columns}
            rows={items}
            rowKey={(o) => o.operator}
          />
        ) : (
          <p className="empty">No operator has decided anything yet.</p>
        )
      }
    </QuerySection>
  );
}
