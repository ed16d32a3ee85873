import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router-dom";
import { apiGet } from "../api/client";
import { isTerminalStatus, type Execution, type Page } from "../api/types";
import { Pager, pageFromParams } from "../components/Pager";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge } from "../components/StatusBadge";
import { useDocumentTitle } from "../hooks";

/** While any listed execution is still going, refresh the list this often. */
const LIST_POLL_MS = 3000;

export default function ExecutionsPage() {
  useDocumentTitle("Executions");
  const [params, setParams] = useSearchParams();
  const page = pageFromParams(params);

  const executions = useQuery({
    queryKey: ["executions", { page }],
    queryFn: ({ signal }) =>
      apiGet<Page<Execution>>(page > 1 ? `/api/executions/?page=${page}` : "/api/executions/", { signal }),
    refetchInterval: (query) =>
      query.state.data?.items.some((e) => !isTerminalStatus(e.status)) ? LIST_POLL_MS : false,
  });

  return (
    <section aria-labelledby="executions-heading">
      <h1 id="executions-heading">Executions</h1>

      {executions.isPending ? (
        <Loading label="Loading executions…" />
      ) : executions.isError ? (
        <ErrorNotice
          title="Could not load executions"
          error={executions.error}
          onRetry={() => void executions.refetch()}
        />
      ) : executions.data.items.length === 0 ? (
        <p className="empty">No executions yet. Start one from the Workflows page.</p>
      ) : (
        <>
          <div className="table-wrap" role="region" aria-labelledby="executions-heading" tabIndex={0}>
            <table className="table">
              <caption className="visually-hidden">Executions, {executions.data.total} in total</caption>
              <thead>
                <tr>
                  <th scope="col">Execution</th>
                  <th scope="col">Workflow</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                </tr>
              </thead>
              <tbody>
                {executions.data.items.map((execution) => (
                  <tr key={execution.execution_id}>
                    <th scope="row">
                      <Link to={`/executions/${encodeURIComponent(execution.execution_id)}`} className="mono">
                        {execution.execution_id}
                      </Link>
                    </th>
                    <td>
                      {execution.workflow_id} <span className="muted">v{execution.workflow_version}</span>
                    </td>
                    <td>
                      {execution.mode}
                      {execution.is_coaching ? <span className="tag">coaching</span> : null}
                      {(execution.mode === "coaching" || execution.mode === "auto") &&
                      !isTerminalStatus(execution.status) ? (
                        <>
                          {" "}
                          <Link
                            to={`/executions/${encodeURIComponent(execution.execution_id)}/coach`}
                            aria-label={`Open the coaching panel of execution ${execution.execution_id}`}
                          >
                            Coach
                          </Link>
                        </>
                      ) : null}
                    </td>
                    <td>
                      <StatusBadge status={execution.status} />
                    </td>
                    <td>
                      <ProgressMeter
                        progress={execution.progress}
                        label={`Progress of execution ${execution.execution_id}`}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            label="Execution pages"
            page={executions.data.page}
            perPage={executions.data.per_page}
            total={executions.data.total}
            onChange={(next) => setParams(next > 1 ? { page: String(next) } : {})}
          />
        </>
      )}
    </section>
  );
}
