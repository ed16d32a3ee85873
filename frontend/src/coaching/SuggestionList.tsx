import type { UseQueryResult } from "@tanstack/react-query";
import { suggestionRegionText } from "../regions/labels";
import type { KeyboardEvent } from "react";
import { Pager, pageCounts } from "../components/Pager";
import { ErrorNotice, Loading } from "../components/QueryState";
import { confidenceLabel, formatAge } from "../format";
import { keyVariables } from "./queueFilters";
import { QueueListbox } from "./QueueListbox";
import type { QueueItem, QueuePage } from "./types";

export const suggestionOptionId = (item: QueueItem) => `queue-item-${item.suggestion_id}`;

/** The queue's pending suggestions, newest first, one page of them: a listbox whose row opens its coaching panel. */
export function SuggestionList({
  queue,
  items,
  filtered,
  selected,
  now,
  onListKeyDown,
  onOpen,
  onPage,
}: {
  queue: UseQueryResult<QueuePage>;
  /** The page's suggestions. */
  items: QueueItem[];
  /** The queue's filters are set (an empty list says so). */
  filtered: boolean;
  selected: QueueItem | null;
  now: number;
  onListKeyDown: (event: KeyboardEvent<HTMLUListElement>) => void;
  /** A click on a row: it is selected, and its panel opened. */
  onOpen: (item: QueueItem) => void;
  onPage: (page: number) => void;
}) {
  return (
    <>
      <h2 id="suggestions-heading">Suggestions</h2>
      {queue.isPending ? (
        <Loading label="Loading the queue…" />
      ) : queue.isError ? (
        <ErrorNotice title="Could not load the queue" error={queue.error} onRetry={() => void queue.refetch()} />
      ) : items.length === 0 ? (
        <p className="empty">
          {filtered
            ? "No suggestion matches these filters."
            : "Nothing to decide: no suggestion is waiting. New ones appear here as they come."}
        </p>
      ) : (
        <>
          <QueueListbox label="Pending suggestions" items={items} selected={selected} optionId={suggestionOptionId}
            onListKeyDown={onListKeyDown} onPick={onOpen}
            main={(item) => (
              <>
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
                {keyVariables(item.variables) ? (
                  <span className="queue__vars mono">{keyVariables(item.variables)}</span>
                ) : null}
              </>
            )}
            meta={(item) => (
              <>
                <span>Confidence {confidenceLabel(item.confidence)}</span>
                <time dateTime={item.created_at}>{formatAge(item.created_at, now)}</time>
                {item.execution_status === "paused" ? <span className="tag tag--paused">‖ Paused</span> : null}
                {item.purpose === "correction" ? <span className="tag">✕ Rejected: needs a correction</span> : null}
                {item.purpose === "spot_check" ? <span className="tag">Spot check</span> : null}
                {item.kind === "tool_call" ? <span className="tag">Agent tool call</span> : null}
                {item.region ? <span className="tag" data-region-id={item.region.id}>Region: {suggestionRegionText(item.region)}</span> : null}
              </>
            )}
          />
          <Pager label="Queue pages" {...pageCounts(queue.data)} onChange={onPage} />
        </>
      )}
    </>
  );
}
