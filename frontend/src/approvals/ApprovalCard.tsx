import { Link } from "react-router-dom";
import { formatAge, formatDateTime, formatValue, shortId } from "../format";
import { PolicyVerdictView } from "./PolicyVerdictView";
import { KIND_LABEL, ON_TIMEOUT_TEXT, countedApprovers, deadlineWords, quorumText } from "./eligibility";
import type { Approval } from "./types";

/**
 * One approval, everything a person needs to decide it: what is asked, the call and its params (tool calls),
 * the policy rule that asked, the quorum so far and who gave it, and what happens at the deadline.
 */
export function ApprovalCard({
  approval,
  headingId,
  now = Date.now(),
  blockedReason = null,
}: {
  approval: Approval;
  headingId: string;
  now?: number;
  /** Why the viewer cannot decide it (shown instead of the keys). */
  blockedReason?: string | null;
}) {
  const approvers = countedApprovers(approval);
  const others = approval.decisions.filter((d) => d.decision !== "approve" && d.decision !== "edit");
  const who = [
    ...approval.approvers.roles.map((r) => `a ${r}`),
    ...approval.approvers.users,
  ].join(" or ");
  return (
    <section className="card approval" aria-labelledby={headingId} data-approval-id={approval.approval_id}>
      <h2 id={headingId} className="suggestion__title" tabIndex={-1}>
        {KIND_LABEL[approval.kind] ?? approval.kind}: {approval.kind === "gateway" ? approval.tool : approval.step_id}
      </h2>
      <p className="approval__message">{approval.message}</p>
      {blockedReason ? (
        <p className="notice notice--warning">
          <strong>You cannot decide this one.</strong> {blockedReason}
        </p>
      ) : null}
      <dl className="facts">
        <div>
          <dt>Kind</dt>
          <dd>{KIND_LABEL[approval.kind] ?? approval.kind}</dd>
        </div>
        {approval.execution_id ? (
          <>
            <div>
              <dt>Execution</dt>
              <dd>
                <Link
                  to={`/executions/${encodeURIComponent(approval.execution_id)}`}
                  className="mono"
                  aria-label={`Execution ${approval.execution_id}`}
                  title={approval.execution_id}
                >
                  {shortId(approval.execution_id)}
                </Link>
              </dd>
            </div>
            <div>
              <dt>Step</dt>
              <dd className="mono">{approval.step_id}</dd>
            </div>
          </>
        ) : (
          <div>
            <dt>Agent</dt>
            <dd className="mono" data-testid="approval-agent">{approval.agent}</dd>
          </div>
        )}
        <div>
          <dt>Quorum</dt>
          <dd data-testid="approval-quorum">
            {quorumText(approval)}
            {approvers.length > 0 ? <> — approved by {approvers.join(", ")}</> : null}
          </dd>
        </div>
        <div>
          <dt>Who decides</dt>
          <dd>
            {who || "—"}
            {approval.separate_duties ? <span className="tag">separate duties: not who started it</span> : null}
          </dd>
        </div>
        <div>
          <dt>Deadline</dt>
          <dd>
            {approval.deadline ? (
              <>
                <time dateTime={approval.deadline}>{formatDateTime(approval.deadline)}</time>{" "}
                <span className="muted">({deadlineWords(approval.deadline, now)})</span> — then{" "}
                {ON_TIMEOUT_TEXT[approval.on_timeout] ?? approval.on_timeout}
              </>
            ) : (
              "None: it waits until someone decides"
            )}
          </dd>
        </div>
        <div>
          <dt>Asked</dt>
          <dd>
            <time dateTime={approval.created_at}>{formatAge(approval.created_at, now)}</time>
          </dd>
        </div>
      </dl>
      {approval.tool ? (
        <>
          <h3 className="suggestion__label">Tool</h3>
          <p className="mono">{approval.tool}</p>
          <h3 className="suggestion__label" id={`${headingId}-params`}>
            Params
          </h3>
          <pre className="code" aria-labelledby={`${headingId}-params`} data-testid="approval-params">
            {formatValue(approval.params)}
          </pre>
        </>
      ) : null}
      {approval.policy?.learned ? (
        <div className="approval-learned" data-testid="approval-learned">
          <h3 className="suggestion__label">Suggested edit (learned corrections)</h3>
          <p>{approval.policy.learned.text} — press <kbd>e</kbd> to start from it.</p>
          <pre className="code">{formatValue(approval.policy.learned.params)}</pre>
        </div>
      ) : null}
      {approval.policy ? <PolicyVerdictView verdict={approval.policy} title="Why it needs a review" /> : null}
      {others.length > 0 ? (
        <>
          <h3 className="suggestion__label">Other decisions</h3>
          <ul>
            {others.map((d, i) => (
              <li key={i}>
                {d.user}: {d.decision}
                {d.comment ? ` — “${d.comment}”` : ""}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
