import { useEffect, useState } from "react";
import type { WorkflowOption } from "../api/workflowOptions";
import { WorkflowSelect } from "../dashboards/WorkflowSelect";
import { AGE_BANDS, QUEUE_KINDS, isFiltered, type QueueFilters } from "./queueFilters";

/** How long typing in the search waits before the queue is read again. */
const SEARCH_DEBOUNCE_MS = 250;

/**
 * The queue's filters: workflow, step (of the chosen workflow), kind, age, a search over the workflow, step, tool
 * and the run's variables, and the order. Changes apply at once (the search after a short pause in typing).
 */
export function QueueFilterBar({
  filters,
  workflows,
  onChange,
}: {
  filters: QueueFilters;
  workflows: readonly WorkflowOption[];
  onChange: (next: QueueFilters) => void;
}) {
  const [q, setQ] = useState(filters.q);
  useEffect(() => setQ(filters.q), [filters.q]);
  useEffect(() => {
    if (q === filters.q) return;
    const timer = setTimeout(() => onChange({ ...filters, q }), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [q, filters, onChange]);

  const steps = workflows.find((w) => w.workflow_id === filters.workflow)?.steps ?? [];
  const set = (patch: Partial<QueueFilters>) => onChange({ ...filters, ...patch });
  return (
    <form className="filters queue__filters" role="search" aria-label="Filter the queue" onSubmit={(e) => {
      e.preventDefault();
      onChange({ ...filters, q });
    }}>
      <div className="field">
        <label htmlFor="queue-search">Search</label>
        <input
          id="queue-search"
          type="search"
          value={q}
          placeholder="workflow, step, tool, variable…"
          onChange={(e) => setQ(e.target.value)}
          onKeyDown={(e) => {
            // Esc leaves the field (what was typed stays), back to the queue's rows, where j / k move again
            if (e.key !== "Escape") return;
            e.preventDefault();
            const list = document.querySelector<HTMLElement>(".queue [role='listbox']");
            if (list) list.focus();
            else e.currentTarget.blur();
          }}
          aria-keyshortcuts="/"
        />
      </div>
      <div className="field">
        <label htmlFor="queue-workflow">Workflow</label>
        <WorkflowSelect
          id="queue-workflow"
          value={filters.workflow}
          onChange={(workflow) => set({ workflow, step: "" })}
          workflows={workflows}
          firstLabel="All workflows"
        />
      </div>
      <div className="field">
        <label htmlFor="queue-step">Step</label>
        <select
          id="queue-step"
          value={filters.step}
          onChange={(e) => set({ step: e.target.value })}
          disabled={!filters.workflow && !filters.step}
          aria-describedby={filters.workflow ? undefined : "queue-step-hint"}
        >
          <option value="">All steps</option>
          {filters.step && !steps.some((s) => s.id === filters.step) ? <option value={filters.step}>{filters.step}</option> : null}
          {steps.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name === s.id ? s.id : `${s.name} (${s.id})`}
            </option>
          ))}
        </select>
        {filters.workflow ? null : (
          <small id="queue-step-hint" className="visually-hidden">
            Choose a workflow first
          </small>
        )}
      </div>
      <div className="field">
        <label htmlFor="queue-kind">Kind</label>
        <select id="queue-kind" value={filters.kind} onChange={(e) => set({ kind: e.target.value })}>
          <option value="">All kinds</option>
          {QUEUE_KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="queue-age">Age</label>
        <select id="queue-age" value={filters.age} onChange={(e) => set({ age: e.target.value })}>
          <option value="">Any age</option>
          {AGE_BANDS.map((b) => (
            <option key={b.value} value={b.value}>
              {b.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="queue-order">Order</label>
        <select
          id="queue-order"
          value={filters.order}
          onChange={(e) => set({ order: e.target.value === "oldest" ? "oldest" : "newest" })}
        >
          <option value="newest">Newest first</option>
          <option value="oldest">Oldest first</option>
        </select>
      </div>
      {isFiltered(filters) ? (
        <button
          type="button"
          className="button button--secondary"
          onClick={() => onChange({ workflow: "", step: "", kind: "", age: "", q: "", order: filters.order })}
        >
          Clear filters
        </button>
      ) : null}
    </form>
  );
}
