import type { KeyboardEvent, ReactNode } from "react";

/**
 * One of the queue's lists (approvals, questions, suggestions): a focusable listbox whose selection the queue's
 * keys move (aria-activedescendant names the selected option), one option a row with its marker, its main
 * text and its meta column.
 */
export function QueueListbox<T>({
  label,
  items,
  selected,
  optionId,
  onListKeyDown,
  onPick,
  main,
  meta,
}: {
  label: string;
  items: T[];
  selected: T | null;
  /** The option's element id; it also tells the items apart. */
  optionId: (item: T) => string;
  onListKeyDown: (event: KeyboardEvent<HTMLUListElement>) => void;
  /** A click on a row. */
  onPick: (item: T) => void;
  /** The row's `queue__main` content. */
  main: (item: T) => ReactNode;
  /** The row's `queue__meta` content. */
  meta: (item: T) => ReactNode;
}) {
  const selectedId = selected ? optionId(selected) : undefined;
  return (
    <ul
      className="queue__list"
      role="listbox"
      aria-label={label}
      aria-describedby="queue-hint"
      aria-activedescendant={selectedId}
      tabIndex={0}
      onKeyDown={onListKeyDown}
    >
      {items.map((item) => {
        const id = optionId(item);
        const isSelected = id === selectedId;
        return (
          <li
            key={id}
            id={id}
            role="option"
            aria-selected={isSelected}
            className={`queue__item${isSelected ? " queue__item--selected" : ""}`}
            onClick={() => onPick(item)}
          >
            <span className="queue__marker" aria-hidden="true">
              {isSelected ? "▶" : ""}
            </span>
            <span className="queue__main">{main(item)}</span>
            <span className="queue__meta">{meta(item)}</span>
          </li>
        );
      })}
    </ul>
  );
}
