import { errorMessage, ApiError } from "../api/client";

export function Loading({ label }: { label: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function ErrorNotice({
  title,
  error,
  onRetry,
}: {
  title: string;
  error: unknown;
  onRetry?: () => void;
}) {
  // the server's code, when it has one to show: never an "Error code:" line with nothing after it
  const code = error instanceof ApiError && typeof error.code === "string" ? error.code.trim() : "";
  return (
    <div className="notice notice--error" role="alert">
      <p className="notice__title">{title}</p>
      <p>{errorMessage(error)}</p>
      {code && code !== "network_error" ? (
        <p className="notice__code">
          Error code: <code>{code}</code>
        </p>
      ) : null}
      {onRetry ? (
        <button type="button" className="button button--secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Why a change failed, under its form or button ("Not saved: …"), announced at once; nothing while it has not. */
export function FailureNotice({
  mutation,
  what,
  describe = errorMessage,
}: {
  mutation: { isError: boolean; error: unknown };
  /** What did not happen: "Not saved". */
  what: string;
  describe?: (error: unknown) => string;
}) {
  return mutation.isError ? (
    <p className="notice notice--error" role="alert">
      {what}: {describe(mutation.error)}
    </p>
  ) : null;
}
