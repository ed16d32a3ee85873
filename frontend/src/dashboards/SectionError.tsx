import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ApiError } from "../api/client";
import { ErrorNotice, Loading } from "../components/QueryState";

/**
 * A failed query of a lead-only view: a 403 says "Leads only" (the reader
 * is an operator here, nothing broke); anything else is an error to retry.
 */
export function SectionError({
  title,
  what,
  error,
  onRetry,
}: {
  title: string;
  /** What is restricted, as a sentence subject: "Workspace totals". */
  what: string;
  error: unknown;
  onRetry?: () => void;
}) {
  if (error instanceof ApiError && error.status === 403) return <LeadsOnly what={what} />;
  return <ErrorNotice title={title} error={error} onRetry={onRetry} />;
}

/** What an operator sees of a lead-only view: whose it is and whom to ask. */
export function LeadsOnly({ what }: { what: string }) {
  return (
    <div className="notice notice--info" role="note">
      <p className="notice__title">Leads only</p>
      <p>{what} are shown to team leads and admins of this workspace. Ask an admin for the lead role to see them.</p>
    </div>
  );
}

/**
 * A lead-only section fed by one query: `loading` while it is pending, a
 * `SectionError` (with Retry) when it failed, else `children` with its data.
 */
export function QuerySection<T>({
  query,
  loading,
  title,
  what,
  children,
}: {
  query: UseQueryResult<T>;
  loading: string;
  title: string;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) return <SectionError title={title} what={what} error={query.error} onRetry={() => void query.refetch()} />;
  return children(query.data);
}
