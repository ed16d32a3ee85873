import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useWorkflowOptions } from "../api/workflowOptions";
import { Link, useSearchParams } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { Pager, pageCounts, pageFromParams } from "../components/Pager";
import { Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { actionLabel, AuditFilters, NO_FILTERS, type AuditFilterValues } from "./AuditFilters";
import "./dashboards.css";
import { DataTable, type Column } from "./DataTable";
import { formatDateTime, formatJson, shortId } from "../format";
import { LeadsOnly, SectionError } from "./SectionError";
import { useAuth } from "../auth/useAuth";
import type { AuditEvent } from "./types";
import { VerifyChain } from "./VerifyChain";

const FILTER_KEYS = ["user", "execution_id", "action", "since"] as const;

function filtersFrom(params: URLSearchParams): AuditFilterValues {
  return Object.fromEntries(FILTER_KEYS.map((k) => [k, params.get(k) ?? ""])) as unknown as AuditFilterValues;
}

/** The list's query: the filters set, and the page after the first. */
function auditQuery(filters: AuditFilterValues, page: number) {
  const query: { user?: string; execution_id?: string; action?: string; since?: string; page?: number } = {};
  for (const key of FILTER_KEYS) if (filters[key]) query[key] = filters[key];
  if (page > 1) query.page = page;
  return query;
}

/** Where a target lives in the app, when it has a page. */
function targetHref(event: AuditEvent): string | null {
  if (!event.target_id) return null;
  const id = encodeURIComponent(event.target_id);
  if (event.target_type === "correction_pack") return `/correction-packs?pack=${id}`;
  if (event.target_type === "workflow") return `/workflows/${id}`;
  if (event.target_type === "execution") return `/executions/${id}`;
  return null;
}

function Target({ event }: { event: AuditEvent }) {
  const { data: workflows } = useWorkflowOptions();
  const kind = event.target_type.replace(/_/g, " ");
  if (!event.target_id) return <>{kind}</>;
  const href = targetHref(event);
  // a workflow by its name where the workspace's list has it (one cached read for all rows), else its short id
  // a member by their email (the server names them: `target_label`), else its short id
  const name = event.target_type === "workflow"
    ? workflows?.find((w) => w.workflow_id === event.target_id)?.name
    : event.target_label ?? null;
  const id = name ? (
    <span title={event.target_id}>{name}</span>
  ) : (
    <span className="mono" title={event.target_id}>{shortId(event.target_id)}</span>
  );
  return href ? (
    <Link to={href} aria-label={`${kind} ${event.target_id}`}>
      {kind} {id}
    </Link>
  ) : (
    <>
      {kind} {id}
    </>
  );
}

const columns: Column<AuditEvent>[] = [
  {
    header: "Time",
    rowHeader: true,
    cell: (e) => (
      <>
        <time dateTime={e.created_at}>{formatDateTime(e.created_at)}</time>
        <span className="cell-note">event {e.seq}</span>
      </>
    ),
  },
  { header: "User", cell: (e) => e.actor },
  { header: "Action", cell: (e) => actionLabel(e.action) },
  { header: "Target", cell: (e) => <Target event={e} /> },
  {
    header: "Execution",
    cell: (e) =>
      e.execution_id ? (
        <Link to={`/executions/${encodeURIComponent(e.execution_id)}`} aria-label={`Execution ${e.execution_id}`} className="mono">
          {shortId(e.execution_id)}
        </Link>
      ) : (
        <span className="muted">—</span>
      ),
  },
  { header: "Result", cell: (e) => e.result },
  {
    header: "Before and after",
    cell: (e) =>
      e.before == null && e.after == null ? (
        <span className="muted">—</span>
      ) : (
        <details className="audit-details">
          <summary>
            Show<span className="visually-hidden"> before and after of event {e.seq}</span>
          </summary>
          {e.before != null ? <pre className="code">before: {formatJson(e.before)}</pre> : null}
          {e.after != null ? <pre className="code">after: {formatJson(e.after)}</pre> : null}
        </details>
      ),
  },
];

/** The workspace's audit log, newest first, with filters and the hash-chain check (leads only). */
export default function AuditPage() {
  useDocumentTitle("Audit log");
  const { role } = useAuth();
  if (role !== "lead" && role !== "admin") {
    // an operator who followed a link here: what the page is, and whom to ask; no filters or chain check to refuse
    return (
      <section aria-labelledby="audit-heading" className="lead-page">
        <h1 id="audit-heading">Audit log</h1>
        <LeadsOnly what="The audit log's events" />
      </section>
    );
  }
  return <AuditLog />;
}

function AuditLog() {
  const [params, setParams] = useSearchParams();
  const filters = filtersFrom(params);
  const page = pageFromParams(params);
  const query = auditQuery(filters, page);
  const filtered = FILTER_KEYS.some((k) => filters[k]);

  const events = useQuery({
    queryKey: ["audit", query],
    queryFn: ({ signal }) => unwrap(api.GET("/api/audit", { params: { query }, signal })),
    placeholderData: keepPreviousData,
  });

  const apply = (next: AuditFilterValues, nextPage = 1) => {
    const query: Record<string, string> = {};
    for (const key of FILTER_KEYS) if (next[key]) query[key] = next[key];
    if (nextPage > 1) query.page = String(nextPage);
    setParams(query);
  };

  return (
    <section aria-labelledby="audit-heading" className="lead-page">
      <div className="page-head">
        <h1 id="audit-heading">Audit log</h1>
        <VerifyChain />
      </div>
      <p className="lead">
        Who did what and when, newest first. Each event is chained to the one before by its hash, so an edited or
        deleted event shows when the chain is verified.
      </p>

      {/* Remounted when the address changes, so the fields always show the filters in force. */}
      <AuditFilters key={FILTER_KEYS.map((k) => filters[k]).join("|")} value={filters} onApply={(v) => apply(v)} />

      <p className="visually-hidden" role="status">
        {events.isSuccess ? `${events.data.total} audit events${filtered ? " match the filters" : ""}.` : ""}
      </p>

      {events.isPending ? (
        <Loading label="Loading audit events…" />
      ) : events.isError ? (
        <SectionError
          title="Could not load the audit log"
          what="Audit events"
          error={events.error}
          onRetry={() => void events.refetch()}
        />
      ) : events.data.items.length === 0 ? (
        <p className="empty">
          {filtered ? "No audit event matches these filters." : "No audit events yet."}{" "}
          {filtered ? (
            <button type="button" className="button button--secondary" onClick={() => apply(NO_FILTERS)}>
              Clear filters
            </button>
          ) : null}
        </p>
      ) : (
        <>
          <DataTable
            caption={`Audit events, ${events.data.total} ${filtered ? "matching" : "in total"}, page ${events.data.page}`}
            columns={columns}
            rows={events.data.items}
            rowKey={(e) => String(e.id)}
          />
          <Pager label="Audit log pages" {...pageCounts(events.data)} onChange={(next) => apply(filters, next)} />
        </>
      )}
    </section>
  );
}
