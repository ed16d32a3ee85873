import { Link } from "react-router-dom";
import { statusLabel } from "../components/StatusBadge";

/** Where an approval is decided: the queue, with that approval selected. */
export const approvalQueuePath = (approvalId: string) => `/queue?approval=${encodeURIComponent(approvalId)}`;

/** No suggestion to decide yet: why (paused, running, waiting for something else). */
export function WaitingNotice({
  status,
  mode,
  executionId,
  gate = null,
}: {
  status: string;
  mode: string;
  executionId: string;
  /** The execution's gate: for an approval, which one (so the notice links to it). */
  gate?: { kind?: string; approval_id?: string; message?: string } | null;
}) {
  if (status === "waiting_approval") {
    return (
      <p className="notice notice--info" role="status">
        <strong>‖ Waiting for an approval</strong>
        {gate?.message ? <>: {gate.message}</> : null}.{" "}
        {gate?.approval_id ? (
          <>
            <Link to={approvalQueuePath(gate.approval_id)}>Decide the approval on the queue</Link> (if you are one of
            its approvers), or follow it on the{" "}
          </>
        ) : (
          <>
            Approvals are decided on the <Link to="/queue">queue</Link>; follow this one on the{" "}
          </>
        )}
        <Link to={`/executions/${encodeURIComponent(executionId)}`}>execution page</Link>.
      </p>
    );
  }
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
  if (status === "waiting_clarification" || status === "waiting_correction") {
    // the question itself is answered in place (control/GateAnswer), right below
    return (
      <p className="notice notice--info" role="status">
        The execution is {statusLabel(status).toLowerCase()}: answer below (i), or edit the step first (e).
      </p>
    );
  }
  // between two suggestions for a moment: not a live region, or every decision would be followed by it and by the
  // announcer's "New suggestion" (the panel's announcer speaks for both)
  return (
    <p className="notice notice--info">
      <span className="spinner" aria-hidden="true" /> Coach is running the next step…
    </p>
  );
}
