import { Link } from "react-router-dom";
import { statusLabel } from "../components/StatusBadge";

/** No suggestion to decide yet: why (paused, running, waiting for something else). */
export function WaitingNotice({ status, mode, executionId }: { status: string; mode: string; executionId: string }) {
  if (mode === "normal") {
    return (
      <p className="notice notice--info" role="status">
        This execution runs in normal mode: Coach asks nothing about it. Follow it on the{" "}
        <Link to={`/executions/${encodeURIComponent(executionId)}`}>execution page</Link>.
      </p>
    );
  }
  if (status === "paused") {
    return (
      <p className="notice notice--warning" role="status">
        <strong>‖ The session is paused.</strong> Resume it (p) to go on.
      </p>
    );
  }
  if (status === "waiting_clarification" || status === "waiting_approval") {
    return (
      <p className="notice notice--info" role="status">
        The execution is {statusLabel(status).toLowerCase()}: answer it on the{" "}
        <Link to={`/executions/${encodeURIComponent(executionId)}`}>execution page</Link>.
      </p>
    );
  }
  return (
    <p className="notice notice--info" role="status">
      <span className="spinner" aria-hidden="true" /> Coach is running the next step…
    </p>
  );
}
