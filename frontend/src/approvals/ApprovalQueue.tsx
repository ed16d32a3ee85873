import { EDITABLE_KINDS } from "./types";
import type { KeyboardEvent } from "react";
import { formatAge } from "../format";
import { APPROVAL_ACTIONS } from "../coaching/decisions";
import { ApprovalCard } from "./ApprovalCard";
import { QueueListbox } from "../coaching/QueueListbox";
import "./approvals.css";
import { KIND_LABEL, deadlineTag, quorumText } from "./eligibility";
import type { Approval } from "./types";
import { ClockIcon } from "../components/ClockIcon";

export const approvalOptionId = (a: Approval) => `queue-approval-${a.approval_id}`;


/**
 * The approvals the viewer can decide, in the queue: a list (one option each, the selection shared with the
 * suggestions below) and the selected one in full with its actions. Those that others must decide are listed
 * after, with why.
 */
export function ApprovalQueue({
  items,
  blocked,
  selected,
  now,
  busy,
  armed = false,
  onSelect,
  onListKeyDown,
  onAction,
}: {
  items: Approval[];
  blocked: { approval: Approval; reason: string }[];
  selected: Approval | null;
  now: number;
  busy: boolean;
  /** Approving the selected one waits for its confirming key (Enter): its button says so, and a click confirms. */
  armed?: boolean;
  onSelect: (approval: Approval) => void;
  onListKeyDown: (event: KeyboardEvent<HTMLUListElement>) => void;
  onAction: (key: "a" | "r" | "e", viaButton?: boolean) => void;
}) {
  return (
    <section aria-labelledby="approvals-heading" className="approvals">
      <h2 id="approvals-heading">
        Approvals <span className="tag">{items.length} for you</span>
      </h2>
      {items.length === 0 ? (
        <p className="empty">No approval waits for you.</p>
      ) : (
        <div className="approvals__layout">
          <QueueListbox label="Pending approvals" items={items} selected={selected} optionId={approvalOptionId}
            onListKeyDown={onListKeyDown} onPick={onSelect}
            main={(approval) => (
              <>
                <span className="queue__workflow">{approval.message}</span>
                <span className="queue__step">
                  {KIND_LABEL[approval.kind] ?? approval.kind}
                  {approval.kind === "gateway" ? <> · agent <span className="mono">{approval.agent}</span></> : <> · step {approval.step_id}</>}
                  {approval.tool ? (
                    <>
                      {" · "}
                      <span className="mono">{approval.tool}</span>
                    </>
                  ) : null}
                </span>
              </>
            )}
            meta={(approval) => (
              <>
                <span>{quorumText(approval)}</span>
                {approval.deadline ? <span className="tag"><ClockIcon /> {deadlineTag(approval.deadline, now)}</span> : null}
                <time dateTime={approval.created_at}>{formatAge(approval.created_at, now)}</time>
              </>
            )}
          />
          <div>
            {selected ? (
              <>
                <ApprovalCard approval={selected} headingId="approval-heading" now={now} />
                <div className="decision-bar" role="group" aria-label="Decide the approval">
                  {APPROVAL_ACTIONS.map(({ key, label }) =>
                    key === "e" && !EDITABLE_KINDS.includes(selected.kind) ? null : (
                      <button
                        key={key}
                        type="button"
                        className={`button${key === "r" ? " button--danger" : key === "e" ? " button--secondary" : ""}${
                          key === "a" ? " decision-bar__button" : ""}${key === "a" && armed ? " decision-bar__button--armed" : ""}`}
                        disabled={busy}
                        aria-keyshortcuts={key === "a" && armed ? "Enter" : key}
                        onClick={() => onAction(key, true)}
                      >
                        {key !== "a" ? (
                          <>
                            {label} <kbd>{key}</kbd>
                          </>
                        ) : armed ? (
                          <>
                            Confirm approve <kbd>Enter</kbd>
                          </>
                        ) : (
                          <>
                            {label} <kbd>a</kbd> <span className="decision-bar__then">then</span> <kbd>Enter</kbd>
                          </>
                        )}
                      </button>
                    ),
                  )}
                </div>
              </>
            ) : (
              <p className="muted approvals__hint">Select an approval (j / k) to see it in full and decide it.</p>
            )}
          </div>
        </div>
      )}
      {blocked.length > 0 ? (
        <details className="approvals__others">
          <summary>
            {blocked.length === 1 ? "1 more approval waits" : `${blocked.length} more approvals wait`} for other people
          </summary>
          <ul>
            {blocked.map(({ approval, reason }) => (
              <li key={approval.approval_id}>
                {approval.message} <span className="muted">({quorumText(approval)})</span> — {reason}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </section>
  );
}
