import type { ReactNode } from "react";

export interface Column<T> {
  /** Column heading (also what assistive tech reads for each cell). */
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** Right-aligned, tabular figures. */
  numeric?: boolean;
  /** This column names the row: rendered as `<th scope="row">`. */
  rowHeader?: boolean;
}

/**
 * The dashboards' table: a scrollable, keyboard-focusable region named by
 * its caption, column headers with `scope`, and an optional row header.
 */
export function DataTable<T>({
  caption,
  showCaption = false,
  columns,
  rows,
  rowKey,
  rowClassName,
}: {
  caption: string;
  showCaption?: boolean;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowClassName?: (row: T) => string | undefined;
}) {
  return (
    <div className="table-wrap data-table" role="region" aria-label={caption} tabIndex={0}>
      <table className="table">
        <caption className={showCaption ? "table-caption" : "visually-hidden"}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th key={i} scope="col" className={column.numeric ? "num" : undefined}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowClassName?.(row)}>
              {columns.map((column, i) =>
                column.rowHeader ? (
                  <th key={i} scope="row" className={column.numeric ? "num" : undefined}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={i} className={column.numeric ? "num" : undefined}>
                    {column.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
