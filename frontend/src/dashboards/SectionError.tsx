import { ApiError } from "../api/client";
import { ErrorNotice } from "../components/QueryState";

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
  if (error instanceof ApiError && error.status === 403) {
    return (
      <div className="notice notice--info" role="note">
        <p className="notice__title">Leads only</p>
        <p>
          {what} are shown to team leads and admins of this workspace. Ask an admin for the lead role to see them.
        </p>
      </div>
    );
  }
  return <ErrorNotice title={title} error={error} onRetry={onRetry} />;
}
