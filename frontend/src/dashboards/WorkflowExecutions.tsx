import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router-dom";
import type { Execution } from "../api/types";
import { api, unwrap } from "../api/typed";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge } from "../components/StatusBadge";
import { DataTable, type Column } from "./DataTable";
import { formatDateTime } from "../format";

const RECENT = 10;

const columns: Column<Execution>[] = [
  {
    header: "Execution",
    rowHeader: true,
    cell: (e) => (
      <Link to={`/executions/${encodeURIComponent(e.execution_id)}`} className="mono">
        {e.execution_id}
      </Link>
    ),
  },
  { header: "Version", cell: (e) => `v${e.workflow_version}` },
  { header: "Mode", cell: (e) => e.mode },
  { header: "Status", cell: (e) => <StatusBadge status={e.status} /> },
  { header: "Started", cell: (e) => formatDateTime(e.created_at) },
];

/** The workflow's latest executions, each linking to its page. */
export function WorkflowExecutions({ workflowId, name }: { workflowId: string; name: string }) {
  const executions = useQuery({
    queryKey: ["executions", { workflowId, perPage: RECENT }],
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/executions/", { params: { query: { workflow_id: workflowId, per_page: RECENT } }, signal })),
  });
  if (executions.isPending) return <Loading label="Loading executions…" />;
  if (executions.isError)
    return <ErrorNotice title="Could not load the executions" error={executions.error} onRetry={() => void executions.refetch()} />;
  if (!executions.data.items.length) return <p className="empty">{name} has not run yet.</p>;
  return (
    <DataTable
      caption={`Latest executions of ${name}: ${executions.data.items.length} of ${executions.data.total}`}
      showCaption
      columns={columns}
      rows={executions.data.items}
      rowKey={(e) => e.execution_id}
    />
  );
}
