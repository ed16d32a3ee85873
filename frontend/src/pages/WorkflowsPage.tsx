import { useQuery } from "@tanstack/react-query";
import { Link, useLocation, useSearchParams } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { ListTable } from "../components/ListTable";
import { Pager, pageCounts, pageFromParams } from "../components/Pager";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useAuth } from "../auth/useAuth";
import { satisfies } from "../approvals/eligibility";
import { levelLabel, modeLabel } from "../dashboards/Badges";
import { useDocumentTitle } from "../hooks";
import { StartRunButton } from "./StartRunButton";

export const workflowsQueryKey = (page: number) => ["workflows", { page }] as const;

export default function WorkflowsPage() {
  useDocumentTitle("Workflows");
  const [params, setParams] = useSearchParams();
  const page = pageFromParams(params);
  const { role } = useAuth();
  // a notice handed over by the page that sent us here (a workflow deleted)
  const notice = (useLocation().state as { notice?: string } | null)?.notice;

  const workflows = useQuery({
    queryKey: workflowsQueryKey(page),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/workflows", { params: { query: page > 1 ? { page } : {} }, signal })),
  });

  return (
    <section aria-labelledby="workflows-heading">
      <div className="page-head">
        <h1 id="workflows-heading">Workflows</h1>
        {satisfies(role, "lead") ? (
          <Link to="/workflows/new" className="button">
            New workflow
          </Link>
        ) : null}
      </div>
      <p className="lead">
        Pick a workflow and run it. Runs open on their own page so you can follow each step; a workflow's name opens
        its definition and metrics.
      </p>
      {notice ? (
        <p className="notice notice--info" role="status">
          {notice}
        </p>
      ) : null}

      {workflows.isPending ? (
        <Loading label="Loading workflows…" />
      ) : workflows.isError ? (
        <ErrorNotice title="Could not load workflows" error={workflows.error} onRetry={() => void workflows.refetch()} />
      ) : workflows.data.items.length === 0 ? (
        <p className="empty">No workflows yet.</p>
      ) : (
        <>
          <ListTable labelledBy="workflows-heading" caption={`Workflows, ${workflows.data.total} in total`} actions
            columns={["Name", "Version", "Level", "Mode", { label: "Steps", className: "num" }]}>
            {workflows.data.items.map((workflow) => {
              return (
                <tr key={`${workflow.id}@${workflow.version}`}>
                  <th scope="row" className="cell-name">
                    <Link
                      to={`/workflows/${encodeURIComponent(workflow.id)}`}
                      className="cell-name__title"
                    >
                      {workflow.name}
                    </Link>
                    {workflow.description ? (
                      <span className="cell-name__description">{workflow.description}</span>
                    ) : null}
                  </th>
                  <td>v{workflow.version}</td>
                  <td>{levelLabel(workflow.level)}</td>
                  <td>{modeLabel(workflow.mode)}</td>
                  <td className="num">{workflow.steps.length}</td>
                  <td className="actions">
                    <StartRunButton workflow={workflow} />
                  </td>
                </tr>
              );
            })}
          </ListTable>
          <Pager label="Workflow pages" {...pageCounts(workflows.data)}
            onChange={(next) => setParams(next > 1 ? { page: String(next) } : {})}
          />
        </>
      )}
    </section>
  );
}
