import type { ReactNode } from "react";
import { ErrorNotice, Loading } from "./QueryState";

/** A column's head: its text, or its text and a class (`num` for figures). */
export type ColumnHead = string | { label: string; className: string };

/**
 * A list's table: a keyboard-focusable region named by the section's heading, a caption for assistive tech,
 * the column heads, and with `actions` a last column (named for screen readers only) for each row's buttons.
 * The rows are the children.
 */
export function ListTable({
  labelledBy,
  caption,
  columns,
  actions = false,
  children,
}: {
  /** The id of the heading that names the region. */
  labelledBy: string;
  caption: ReactNode;
  columns: ColumnHead[];
  actions?: boolean;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap" role="region" aria-labelledby={labelledBy} tabIndex={0}>
      <table className="table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === "string" ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.label} scope="col" className={column.className}>
                  {column.label}
                </th>
              ),
            )}
            {actions ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A list's loading, failure and emptiness, each on its own: rows loaded before stay shown (below this) when a
 * later refetch fails.
 */
export function ListStatus({
  query,
  count,
  loading,
  failed,
  empty,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown; data?: unknown };
  /** How many rows there are. */
  count: number;
  loading: string;
  /** The title of the failure's notice. */
  failed: string;
  /** What an empty list says. */
  empty: string;
}) {
  return (
    <>
      {query.isPending ? <Loading label={loading} /> : null}
      {query.isError ? <ErrorNotice title={failed} error={query.error} /> : null}
      {query.data && count === 0 ? <p className="empty">{empty}</p> : null}
    </>
  );
}
