import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type KeyboardEvent } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import { Pager, pageFromParams } from "../components/Pager";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { useRealtime, useSocketEvent, useWorkspaceRoom } from "../realtime/context";
import { coachingKeys, fetchQueue } from "./api";
import { confidenceLabel, formatAge } from "../format";
import type { QueueItem } from "./types";
import { OFFLINE_POLL_MS } from "./useCoachingSession";
import { useShortcuts } from "./useShortcuts";
import "./coaching.css";

/** Ages are re-worded this often. */
const AGE_TICK_MS = 30_000;

const optionId = (item: QueueItem) => `queue-item-${item.suggestion_id}`;
const panelPath = (item: QueueItem) => `/executions/${encodeURIComponent(item.execution_id)}/coach`;

/** Re-renders every `ms` so relative times stay true. */
function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/**
 * The operator's work queue: the workspace's pending suggestions across
 * executions, newest first, kept live from the workspace room. `j`/`k` (or
 * the arrows in the list) move the selection, Enter opens the panel.
 */
export default function QueuePage() {
  useDocumentTitle("Queue");
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = pageFromParams(params);
  const now = useNow(AGE_TICK_MS);
  useWorkspaceRoom();
  const { status: connection } = useRealtime();

  const queue = useQuery({
    queryKey: coachingKeys.queue(page),
    queryFn: ({ signal }) => fetchQueue(page, signal),
    // live from the workspace room; read every few seconds instead while that is down
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
  });
  // A new suggestion, or a decision anywhere in the workspace: read the queue again.
  const refresh = () => void queryClient.invalidateQueries({ queryKey: coachingKeys.queueAll });
  useSocketEvent("coaching_suggestion", refresh);
  useSocketEvent("execution_update", refresh);

  const items = queue.data?.items ?? [];
  // The selection follows its suggestion when the list changes, and falls back to the first.
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const index = Math.max(0, items.findIndex((item) => item.suggestion_id === selectedId));
  const selected = items[index] ?? null;

  const move = (by: number) => {
    if (items.length === 0) return;
    const target = items[Math.min(items.length - 1, Math.max(0, index + by))];
    setSelectedId(target.suggestion_id);
    document.getElementById(optionId(target))?.scrollIntoView?.({ block: "nearest" });
  };
  const open = (item: QueueItem | null) => {
    if (item) navigate(panelPath(item));
  };

  useShortcuts({
    j: () => move(1),
    k: () => move(-1),
    Enter: () => open(selected),
  });

  const onListKeyDown = (event: KeyboardEvent<HTMLUListElement>) => {
    const by = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (by) {
      event.preventDefault();
      move(by);
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      move(event.key === "Home" ? -items.length : items.length);
    }
  };

  return (
    <section aria-labelledby="queue-heading" className="queue">
      <div className="page-head">
        <h1 id="queue-heading">Queue</h1>
        {queue.data ? (
          <p className="muted queue__count" role="status">
            {queue.data.total === 1 ? "1 suggestion waits" : `${queue.data.total} suggestions wait`} for a decision
          </p>
        ) : null}
      </div>
      <p className="muted queue__hint" id="queue-hint">
        <kbd>j</kbd> / <kbd>k</kbd> move the selection, <kbd>Enter</kbd> opens its coaching panel.
      </p>

      {queue.isPending ? (
        <Loading label="Loading the queue…" />
      ) : queue.isError ? (
        <ErrorNotice title="Could not load the queue" error={queue.error} onRetry={() => void queue.refetch()} />
      ) : items.length === 0 ? (
        <p className="empty">Nothing to decide: no suggestion is waiting. New ones appear here as they come.</p>
      ) : (
        <>
          <ul
            className="queue__list"
            role="listbox"
            aria-label="Pending suggestions"
            aria-describedby="queue-hint"
            aria-activedescendant={selected ? optionId(selected) : undefined}
            tabIndex={0}
            onKeyDown={onListKeyDown}
          >
            {items.map((item, i) => {
              const isSelected = i === index;
              const paused = item.execution_status === "paused";
              return (
                <li
                  key={item.suggestion_id}
                  id={optionId(item)}
                  role="option"
                  aria-selected={isSelected}
                  className={`queue__item${isSelected ? " queue__item--selected" : ""}`}
                  onClick={() => {
                    setSelectedId(item.suggestion_id);
                    open(item);
                  }}
                >
                  <span className="queue__marker" aria-hidden="true">
                    {isSelected ? "▶" : ""}
                  </span>
                  <span className="queue__main">
                    <span className="queue__workflow">{item.workflow_name}</span>
                    <span className="queue__step">
                      {item.step_name || item.step_id}
                      {item.tool ? (
                        <>
                          {" · "}
                          <span className="mono">{item.tool}</span>
                        </>
                      ) : null}
                    </span>
                  </span>
                  <span className="queue__meta">
                    <span>Confidence {confidenceLabel(item.confidence)}</span>
                    <time dateTime={item.created_at}>{formatAge(item.created_at, now)}</time>
                    {paused ? <span className="tag tag--paused">‖ Paused</span> : null}
                    {item.purpose === "correction" ? <span className="tag">✕ Rejected: needs a correction</span> : null}
                    {item.purpose === "spot_check" ? <span className="tag">Spot check</span> : null}
                  </span>
                </li>
              );
            })}
          </ul>
          <Pager
            label="Queue pages"
            page={queue.data.page}
            perPage={queue.data.per_page}
            total={queue.data.total}
            onChange={(next) => setParams(next > 1 ? { page: String(next) } : {})}
          />
        </>
      )}
    </section>
  );
}
