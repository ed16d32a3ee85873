import { useEffect, useId, useRef } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import "./dashboards.css";
import { plural } from "../format";
import { PackCard } from "./PackCard";
import { useIsLead } from "../auth/useAuth";
import { PackImport } from "./PackImport";
import { useLivePacks, usePacks, useWorkflowMetricsList } from "./queries";
import { WorkflowSelect } from "./WorkflowSelect";
import type { CorrectionPack } from "./types";

/** Packs in the order the server gives them (by workflow, then step), grouped by workflow. */
function byWorkflow(packs: CorrectionPack[]): [string, CorrectionPack[]][] {
  const groups = new Map<string, CorrectionPack[]>();
  for (const pack of packs) groups.set(pack.workflow_id, [...(groups.get(pack.workflow_id) ?? []), pack]);
  return [...groups.entries()];
}

/**
 * The CorrectionPacksDashboard: per workflow step, the changes operators
 * made and the rules Coach learned from them; leads enable, disable,
 * export and import packs. `?workflow=<id>` filters; `?pack=<id>` (the
 * CoachingPanel's link from a suggestion's source) scrolls to that pack,
 * highlights it and moves focus to it.
 */
export default function CorrectionPacksPage() {
  useDocumentTitle("Correction packs");
  const [params, setParams] = useSearchParams();
  const lead = useIsLead();
  const workflowFilter = params.get("workflow") || null;
  const linkedPack = params.get("pack");
  const packs = usePacks(workflowFilter);
  const workflows = useWorkflowMetricsList();
  const filterId = useId();
  const focused = useRef<string | null>(null);
  useLivePacks();

  const names = new Map((workflows.data?.items ?? []).map((w) => [w.workflow_id, w.name]));
  const nameOf = (id: string) => names.get(id) ?? `Workflow ${id}`;
  const items = packs.data?.items;
  const linkedFound = !!linkedPack && !!items?.some((p) => p.id === linkedPack);

  useEffect(() => {
    if (!linkedPack || !linkedFound || focused.current === linkedPack) return;
    const element = document.getElementById(`pack-${linkedPack}`);
    if (!element) return;
    focused.current = linkedPack;
    element.scrollIntoView?.({ block: "start", behavior: "smooth" });
    element.focus({ preventScroll: true });
  }, [linkedPack, linkedFound]);

  const setFilter = (id: string) => setParams(id ? { workflow: id } : {});

  return (
    <section aria-labelledby="packs-heading" className="lead-page">
      <h1 id="packs-heading">Correction packs</h1>
      <p className="lead">
        What operators corrected at each workflow step, grouped by the change they made. A change made at least 3
        times and in at least 80% of a step's corrections of that field becomes a learned rule that later suggestions
        apply; a correction of another field does not undo it.
      </p>

      <div className="field field--inline">
        <label htmlFor={filterId}>Workflow</label>
        <WorkflowSelect
          id={filterId}
          value={workflowFilter ?? ""}
          onChange={setFilter}
          workflows={workflows.data?.items ?? []}
          firstLabel="All workflows"
        >
          {workflowFilter && !names.has(workflowFilter) ? <option value={workflowFilter}>{nameOf(workflowFilter)}</option> : null}
        </WorkflowSelect>
      </div>

      {linkedPack && items && !linkedFound ? (
        <div className="notice notice--info" role="note">
          <p className="notice__title">The linked pack is not listed</p>
          <p>
            Correction pack <code>{linkedPack}</code>{" "}
            {workflowFilter ? (
              <>
                is not among this workflow's packs. <Link to={`/correction-packs?pack=${encodeURIComponent(linkedPack)}`}>Look in all workflows</Link>.
              </>
            ) : (
              "does not exist in this workspace (it may have been replaced by an import)."
            )}
          </p>
        </div>
      ) : null}

      {packs.isPending ? (
        <Loading label="Loading correction packs…" />
      ) : packs.isError ? (
        <ErrorNotice title="Could not load the correction packs" error={packs.error} onRetry={() => void packs.refetch()} />
      ) : packs.data.items.length === 0 ? (
        <p className="empty">
          {workflowFilter
            ? "No corrections recorded for this workflow yet."
            : "No corrections recorded yet. Packs appear when operators correct a suggestion."}
        </p>
      ) : (
        byWorkflow(packs.data.items).map(([workflowId, group]) => (
          <section key={workflowId} className="pack-group" aria-labelledby={`packs-of-${workflowId}`}>
            <h2 id={`packs-of-${workflowId}`}>
              {nameOf(workflowId)} <span className="tag">{plural(group.length, "step")}</span>
            </h2>
            <ul className="packs">
              {group.map((pack) => (
                <li key={pack.id}>
                  <PackCard pack={pack} workflowName={nameOf(workflowId)} linked={pack.id === linkedPack} />
                </li>
              ))}
            </ul>
          </section>
        ))
      )}

      {lead ? <PackImport workflows={workflows.data?.items ?? []} /> : null}
    </section>
  );
}
