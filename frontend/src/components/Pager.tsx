/** Previous / next controls for a paginated list; hidden when one page suffices. */
export function Pager({
  page,
  perPage,
  total,
  onChange,
  label,
}: {
  page: number;
  perPage: number;
  total: number;
  onChange: (page: number) => void;
  label: string;
}) {
  const pages = perPage > 0 ? Math.max(1, Math.ceil(total / perPage)) : 1;
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="button button--secondary" disabled={page <= 1} onClick={() => onChange(page - 1)}>
        Previous page
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button
        type="button"
        className="button button--secondary"
        disabled={page >= pages}
        onClick={() => onChange(page + 1)}
      >
        Next page
      </button>
    </nav>
  );
}

/** Where a page of a list, as the API returns it, stands: the Pager's page, perPage and total. */
export function pageCounts(data: { page: number; per_page: number; total: number }) {
  return { page: data.page, perPage: data.per_page, total: data.total };
}

/** Reads a positive page number from URL search params. */
export function pageFromParams(params: URLSearchParams): number {
  const n = Number.parseInt(params.get("page") ?? "1", 10);
  return Number.isFinite(n) && n > 0 ? n : 1;
}
