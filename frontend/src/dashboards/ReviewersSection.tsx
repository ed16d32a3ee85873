/**
 * Evidence from attentive reviews (issue #41, item 6; docs/autonomy.md "Attentive reviews"): acceptance means little
 * if reviewers rubber-stamp. Per operator, over a workflow's decisions or one step's: their time to decide (median,
 * 90th percentile) and their accepts faster than the workspace's floor, flagged in words; their check suggestions
 * caught and missed, and whether they are attentive (docs/autonomy.md "Check suggestions"). A lead sets the floor.
 */
import { useId, useState, type FormEvent } from "react";
import { ApiError, errorMessage } from "../api/client";
import { formatCount, formatMs, formatRate, plural } from "../format";
import { DataTable, type Column } from "./DataTable";
import { useReviewFloor, useReviewers, useSetReviewFloor, type ReviewFloor, type Reviewer } from "./queries";
import { SectionError } from "./SectionError";
import { Loading } from "../components/QueryState";

const MIN_MS = 100;
const MAX_MS = 600_000;

/** "step fetch", "tool echo of agent step agent" */
export function scopeLabel(scope: string): string {
  const [owner, tool] = scope.split(/:(.*)/s);
  return tool ? `tool ${tool} of agent step ${owner}` : `step ${scope}`;
}

/** The fast-accepts cell: the count and share in words, flagged in words when there are any. */
export function FastAccepts({ r, floorMs }: { r: Reviewer; floorMs: number }) {
  if (!r.accepts) return <span className="muted">no accept</span>;
  const of = `${formatCount(r.fast_accepts)} of ${plural(r.accepts, "accept")}`;
  if (!r.fast_accepts)
    return (
      <span data-fast="false">
        none of {plural(r.accepts, "accept")} faster than {formatMs(floorMs)}
      </span>
    );
  return (
    <span data-fast="true">
      <span className="status status--warning">Flagged</span> {of} ({formatRate(r.fast_accept_share, 0)})
      faster than {formatMs(floorMs)}
    </span>
  );
}

/** The checks cell: caught of checked, in words (docs/autonomy.md#check-suggestions). */
export function Checks({ r }: { r: Reviewer }) {
  const c = r.checks;
  if (!c || !c.checks) return <span className="muted">no check yet</span>;
  return (
    <span data-catches={c.catches}>
      caught {formatCount(c.catches)} of {plural(c.checks, "check")} ({formatRate(c.catch_rate, 0)})
      {c.misses ? <>; missed {formatCount(c.misses)}</> : null}
    </span>
  );
}

/** Whether the operator clears the lead's bars now, in words. */
export function Attentive({ r }: { r: Reviewer }) {
  if (!r.checks) return <span className="muted">—</span>;
  return r.checks.attentive ? (
    <span className="status status--success" data-attentive="true">
      Attentive
    </span>
  ) : (
    <span className="status status--muted" data-attentive="false">
      Not attentive
    </span>
  );
}

const columns = (floorMs: number): Column<Reviewer>[] => [
  { header: "Operator", rowHeader: true, cell: (r) => r.operator },
  { header: "Decisions", numeric: true, cell: (r) => formatCount(r.decisions) },
  { header: "Accepts", numeric: true, cell: (r) => formatCount(r.accepts) },
  {
    header: (
      <>
        Median <span className="cell-note">to decide</span>
      </>
    ),
    numeric: true,
    cell: (r) => formatMs(r.median_ms),
  },
  {
    header: (
      <>
        90th <span className="cell-note">percentile to decide</span>
      </>
    ),
    numeric: true,
    cell: (r) => formatMs(r.p90_ms),
  },
  { header: "Fast accepts", cell: (r) => <FastAccepts r={r} floorMs={floorMs} /> },
  {
    // one column for the checks and what they make of the operator: the table fits 800 px
    header: (
      <>
        Checks <span className="cell-note">workspace-wide</span>
      </>
    ),
    cell: (r) => (
      <>
        <Checks r={r} /> <Attentive r={r} />
      </>
    ),
  },
];

/** The draft floor as whole milliseconds, or what is wrong with it (the server's rule). */
export function checkFloor(text: string): { value?: number; problem?: string } {
  const n = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(n)) return { problem: "must be a whole number of milliseconds" };
  if (n < MIN_MS || n > MAX_MS) return { problem: `must be between ${MIN_MS} and ${MAX_MS} milliseconds` };
  return { value: n };
}

function serverProblem(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.status !== 422 || typeof error.details !== "object" || !error.details) return null;
  const details = error.details as Record<string, unknown>;
  const fields = (typeof details.json === "object" && details.json ? details.json : details) as Record<string, unknown>;
  const found = fields.attentive_floor_ms;
  return found ? (Array.isArray(found) ? found.join(" ") : String(found)) : null;
}

/** A lead sets the floor under which an accept counts as fast (PUT /api/workspace/reviews). */
function FloorForm({ floor }: { floor: ReviewFloor }) {
  const id = useId();
  const current = floor.attentive_floor_ms ?? floor.default_ms ?? 1500;
  const [draft, setDraft] = useState(String(current));
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = useSetReviewFloor();

  const send = (value: number | null) => {
    setSaved(null);
    save.mutate(value, {
      onSuccess: (after) => {
        const ms = after.attentive_floor_ms ?? after.default_ms ?? 1500;
        setDraft(String(ms));
        setProblem(null);
        setSaved(`Floor saved: an accept faster than ${formatMs(ms)} counts as fast.`);
      },
      onError: (error) => setProblem(serverProblem(error)),
    });
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkFloor(draft);
    setProblem(checked.problem ?? null);
    if (checked.value !== undefined) send(checked.value);
  };
  const failure = save.error && !serverProblem(save.error) ? save.error : null;
  return (
    <form onSubmit={onSubmit} aria-label="Floor for fast accepts" noValidate className="filters reviewers__floor">
      <div className="field">
        <label htmlFor={`${id}-floor`}>Floor for fast accepts (milliseconds)</label>
        <input
          id={`${id}-floor`}
          inputMode="numeric"
          value={draft}
          aria-invalid={problem ? true : undefined}
          aria-describedby={`${id}-hint${problem ? ` ${id}-error` : ""}`}
          onChange={(e) => setDraft(e.target.value)}
        />
        <small id={`${id}-hint`} className="muted">
          {MIN_MS}–{MAX_MS}; {floor.default_ms ?? 1500} unless a lead sets another. Applies to every workflow of this
          workspace.
        </small>
        {problem ? (
          <small id={`${id}-error`} className="field-error" role="alert">
            Floor: {problem}
          </small>
        ) : null}
      </div>
      <div className="filters__actions">
        <button type="submit" className="button" aria-disabled={save.isPending || undefined}>
          {save.isPending ? "Saving…" : "Save floor"}
        </button>
        {floor.workspace ? (
          <button type="button" className="button button--secondary" onClick={() => send(null)}>
            Use the default ({formatMs(floor.default_ms ?? 1500)})
          </button>
        ) : null}
      </div>
      {failure ? (
        <p role="alert" className="notice notice--error">
          Could not save the floor: {errorMessage(failure)}
        </p>
      ) : null}
      <p role="status" className="muted">
        {saved ?? ""}
      </p>
    </form>
  );
}

/** The workflow page's Reviewers section (leads): the table, a scope to read it for, and the floor. */
export function ReviewersSection({ workflowId, workflowName, canSetFloor }: { workflowId: string; workflowName: string; canSetFloor: boolean }) {
  const id = useId();
  const [scope, setScope] = useState<string | null>(null);
  const reviewers = useReviewers(workflowId, scope);
  const floor = useReviewFloor();
  const data = reviewers.data;

  return (
    <section aria-labelledby={`${id}-title`} className="reviewers">
      <h2 id={`${id}-title`}>Reviewers</h2>
      <p className="muted">
        Acceptance means little if reviewers rubber-stamp. Each operator's time to decide runs from when the suggestion
        was shown to their decision; an accept faster than the floor is a fast accept.
      </p>
      {data && data.scopes.length ? (
        <div className="field reviewers__scope">
          <label htmlFor={`${id}-scope`}>Decisions of</label>
          <select id={`${id}-scope`} value={scope ?? ""} onChange={(e) => setScope(e.target.value || null)}>
            <option value="">all steps</option>
            {data.scopes.map((s) => (
              <option key={s} value={s}>
                {scopeLabel(s)}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      {reviewers.isPending ? (
        <Loading label="Loading the reviewers…" />
      ) : reviewers.isError ? (
        <SectionError
          title="Could not load the reviewers"
          what="Reviewers' figures"
          error={reviewers.error}
          onRetry={() => void reviewers.refetch()}
        />
      ) : (
        <>
          <p aria-live="polite">
            {plural(reviewers.data.decisions, "decision")} in the last {plural(reviewers.data.days, "day")}
            {reviewers.data.step_id ? ` of ${scopeLabel(reviewers.data.step_id)}` : ""}; floor{" "}
            <strong>{formatMs(reviewers.data.floor_ms)}</strong>.
            {reviewers.data.evidence_from === "attentive"
              ? " Only attentive reviewers' decisions count in the readiness evidence."
              : ""}
          </p>
          {reviewers.data.items.length ? (
            <DataTable
              caption={`Reviewers of ${workflowName}${reviewers.data.step_id ? `, ${scopeLabel(reviewers.data.step_id)}` : ""}: time to decide and fast accepts`}
              columns={columns(reviewers.data.floor_ms)}
              rows={reviewers.data.items}
              rowKey={(r) => r.operator}
            />
          ) : (
            <p className="empty">Nobody has decided a suggestion here yet.</p>
          )}
        </>
      )}
      {canSetFloor ? (
        floor.isPending ? null : floor.isError ? (
          <p className="field__error">Could not load the floor: {errorMessage(floor.error)}</p>
        ) : (
          <FloorForm floor={floor.data} />
        )
      ) : null}
    </section>
  );
}
