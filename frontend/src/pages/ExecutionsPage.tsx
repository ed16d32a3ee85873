import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router-dom";
import { errorMessage } from "../api/client";
import { api, unwrap } from "../api/typed";
import { isTerminalStatus, type Execution, type ExecutionMode, type ExecutionStatus } from "../api/types";
import { useWorkflowOptions } from "../api/workflowOptions";
import { ListTable } from "../components/ListTable";
import { Pager, pageCounts } from "../components/Pager";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { ConfirmDialog } from "../dashboards/ConfirmDialog";
import { WorkflowSelect } from "../dashboards/WorkflowSelect";
import { formatDateTime } from "../format";
import { useDocumentTitle } from "../hooks";
import { keyVariables } from "../coaching/queueFilters";
import { DialogButton } from "../components/DialogButton";

/** While any listed execution is still going, refresh the list this often. */
const LIST_POLL_MS = 3000;
const FILTERS = ["workflow_id", "mode", "status"] as const;
const MODES: readonly ExecutionMode[] = ["coaching", "auto", "normal"];
const STATUSES: readonly ExecutionStatus[] = [
  "pending",
  "running",
  "waiting_decision",
  "waiting_clarification",
  "waiting_correction",
  "waiting_approval",
  "paused",
  "resumed",
  "completed",
  "failed",
  "cancelled",
];

/** `/api/executions/` with the page's filters (only those set). */
/** The filter the page offers that `value` names, or undefined (a value in the address that it does not offer). */
function offered<T extends string>(choices: readonly T[], value: string | null): T | undefined {
  return choices.find((choice) => choice === value);
}

/** `GET /api/executions/`'s query from the page's filters (only those set, in the order of the address). */
function executionsQuery(params: URLSearchParams) {
  const page = Number(params.get("page"));
  return {
    workflow_id: params.get("workflow_id") || undefined,
    mode: offered(MODES, params.get("mode")),
    status: offered(STATUSES, params.get("status")),
    page: Number.isInteger(page) && page > 1 ? page : undefined,
  };
}

export function executionsPath(params: URLSearchParams): string {
  const query = new URLSearchParams();
  for (const key of [...FILTERS, "page"]) {
    const value = params.get(key);
    if (value && !(key === "page" && value === "1")) query.set(key, value);
  }
  const text = query.toString();
  return text ? `/api/executions/?${text}` : "/api/executions/";
}

export default function ExecutionsPage() {
  useDocumentTitle("Executions");
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const workflows = useWorkflowOptions();
  const [cancelling, setCancelling] = useState<Execution | null>(null);
  const path = executionsPath(params);

  const executions = useQuery({
    queryKey: ["executions", { path }],
    queryFn: ({ signal }) => unwrap(api.GET("/api/executions/", { params: { query: executionsQuery(params) }, signal })),
    refetchInterval: (query) =>
      query.state.data?.items.some((e) => !isTerminalStatus(e.status)) ? LIST_POLL_MS : false,
  });

  const cancel = useMutation({
    mutationFn: (execution: Execution) =>
      unwrap(
        api.POST("/api/executions/{execution_id}/cancel", { params: { path: { execution_id: execution.execution_id } } }),
      ),
    onSuccess: () => {
      setCancelling(null);
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
    },
  });

  const setFilter = (key: (typeof FILTERS)[number], value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
  const filtered = FILTERS.some((key) => params.get(key));

  return (
    <section aria-labelledby="executions-heading">
      <h1 id="executions-heading">Executions</h1>

      <form className="filters" aria-label="Filter executions" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="executions-workflow">Workflow</label>
          <WorkflowSelect
            id="executions-workflow"
            value={params.get("workflow_id") ?? ""}
            onChange={(value) => setFilter("workflow_id", value)}
            workflows={workflows.data ?? []}
            firstLabel="All workflows"
          />
        </div>
        <div className="field">
          <label htmlFor="executions-mode">Mode</label>
          <select id="executions-mode" value={params.get("mode") ?? ""} onChange={(e) => setFilter("mode", e.target.value)}>
            <option value="">All modes</option>
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="executions-status">Status</label>
          <select
            id="executions-status"
            value={params.get("status") ?? ""}
            onChange={(e) => setFilter("status", e.target.value)}
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </div>
        {filtered ? (
          <button type="button" className="button button--secondary" onClick={() => setParams({})}>
            Clear filters
          </button>
        ) : null}
      </form>

      {cancelling ? (
        <ConfirmDialog
          title="Cancel this execution?"
          confirmLabel="Cancel execution"
          cancelLabel="Keep running"
          busy={cancel.isPending}
          onConfirm={() => cancel.mutate(cancelling)}
          onCancel={() => {
            cancel.reset();
            setCancelling(null);
          }}
        >
          <p>
            {cancelling.workflow_name ?? cancelling.workflow_id} ({cancelling.execution_id}) stops where it is: no
            further step runs. This cannot be undone.
          </p>
          {cancel.isError ? (
            <p className="notice notice--error" role="alert">
              {errorMessage(cancel.error)}
            </p>
          ) : null}
        </ConfirmDialog>
      ) : null}

      {executions.isPending ? (
        <Loading label="Loading executions…" />
      ) : executions.isError ? (
        <ErrorNotice
          title="Could not load executions"
          error={executions.error}
          onRetry={() => void executions.refetch()}
        />
      ) : executions.data.items.length === 0 ? (
        <p className="empty">
          {filtered ? "No execution matches these filters." : "No executions yet. Start one from the Workflows page."}
        </p>
      ) : (
        <>
          <ListTable labelledBy="executions-heading" caption={`Executions, ${executions.data.total} in total`} actions
            columns={["Workflow", "Mode", "Status", "Progress", "Started", "Finished"]}>
            {executions.data.items.map((execution) => {
              const name = execution.workflow_name ?? execution.workflow_id;
              const live = !isTerminalStatus(execution.status);
              return (
                <tr key={execution.execution_id}>
                  <th scope="row" className="cell-name">
                    <Link
                      to={`/executions/${encodeURIComponent(execution.execution_id)}`}
                      className="cell-name__title"
                      aria-label={`${name}, execution ${execution.execution_id}`}
                    >
                      {name}
                    </Link>
                    <span className="cell-name__description mono">
                      {execution.execution_id} · v{execution.workflow_version}
                    </span>
                    {keyVariables(execution.variables) ? (
                      <span className="cell-name__description mono">{keyVariables(execution.variables)}</span>
                    ) : null}
                  </th>
                  <td>
                    {execution.mode}
                    {(execution.mode === "coaching" || execution.mode === "auto") && live ? (
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
                  <td>
                    <time dateTime={execution.started_at ?? execution.created_at ?? undefined}>
                      {formatDateTime(execution.started_at ?? execution.created_at)}
                    </time>
                  </td>
                  <td>
                    {execution.finished_at ? (
                      <time dateTime={execution.finished_at}>{formatDateTime(execution.finished_at)}</time>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="actions">
                    {live ? (
                      <DialogButton label={`Cancel execution ${execution.execution_id}`}
                        onOpen={() => { cancel.reset(); setCancelling(execution); }}>
                        Cancel
                      </DialogButton>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </ListTable>
          <Pager label="Execution pages" {...pageCounts(executions.data)}
            onChange={(next) => {
              const nextParams = new URLSearchParams(params);
              if (next > 1) nextParams.set("page", String(next));
              else nextParams.delete("page");
              setParams(nextParams);
            }}
          />
        </>
      )}
    </section>
  );
}
