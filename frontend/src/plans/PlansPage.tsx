import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { Pager, pageFromParams } from "../components/Pager";
import { ProgressMeter } from "../components/ProgressMeter";
import { ErrorNotice, Loading } from "../components/QueryState";
import { StatusBadge, statusLabel } from "../components/StatusBadge";
import { formatDateTime } from "../format";
import { useDocumentTitle } from "../hooks";
import { NewPlanForm } from "./NewPlanForm";
import { PLAN_STATUSES, PLANS_PER_PAGE, fetchPlans, isPlanStatus, planKeys } from "./api";
import "./plans.css";

/** `/plans`: ad-hoc plans (inline steps) with their status, a filter, and a form for a new one. */
export default function PlansPage() {
  useDocumentTitle("Plans");
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const status = params.get("status") ?? "";
  const page = pageFromParams(params);
  const plans = useQuery({
    queryKey: planKeys.list(status, page),
    queryFn: ({ signal }) => fetchPlans(isPlanStatus(status) ? status : "", page, signal),
    refetchInterval: 5_000,
  });
  const setFilter = (next: Record<string, string>) => {
    const merged = new URLSearchParams(params);
    for (const [k, v] of Object.entries(next)) {
      if (v) merged.set(k, v);
      else merged.delete(k);
    }
    setParams(merged, { replace: true });
  };

  return (
    <section aria-labelledby="plans-heading" className="plans">
      <div className="page-head">
        <h1 id="plans-heading">Plans</h1>
      </div>
      <p className="muted">
        A plan is a one-off list of steps: created as a draft, approved (by a lead, or by an operator when the policy
        allows every call), then executed and watched like any execution.
      </p>
      <NewPlanForm onCreated={(plan) => navigate(`/plans/${encodeURIComponent(plan.plan_id)}`)} />

      <h2 id="plan-list-heading">All plans</h2>
      <div className="field plans__filter">
        <label htmlFor="plan-status-filter">Status</label>
        <select id="plan-status-filter" value={status} onChange={(e) => setFilter({ status: e.target.value, page: "" })}>
          <option value="">Any</option>
          {PLAN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusLabel(s)}
            </option>
          ))}
        </select>
      </div>
      {plans.isPending ? (
        <Loading label="Loading plans…" />
      ) : plans.isError ? (
        <ErrorNotice title="Could not load the plans" error={plans.error} onRetry={() => void plans.refetch()} />
      ) : plans.data.items.length === 0 ? (
        <p className="empty">{status ? `No plan is ${statusLabel(status).toLowerCase()}.` : "No plans yet."}</p>
      ) : (
        <>
          <table className="table" aria-labelledby="plan-list-heading">
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Status</th>
                <th scope="col">Mode</th>
                <th scope="col">Steps</th>
                <th scope="col">Progress</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {plans.data.items.map((plan) => (
                <tr key={plan.plan_id}>
                  <th scope="row">
                    <Link to={`/plans/${encodeURIComponent(plan.plan_id)}`}>{plan.name}</Link>
                  </th>
                  <td>
                    <StatusBadge status={plan.status} />
                  </td>
                  <td>{plan.mode}</td>
                  <td>{plan.steps.length}</td>
                  <td>
                    <ProgressMeter progress={plan.progress} label={`Progress of ${plan.name}`} />
                  </td>
                  <td>
                    {formatDateTime(plan.created_at)} <span className="muted">by {plan.created_by}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager
            page={page}
            perPage={PLANS_PER_PAGE}
            total={plans.data.total}
            label="Plan pages"
            onChange={(p) => setFilter({ page: String(p) })}
          />
        </>
      )}
    </section>
  );
}
