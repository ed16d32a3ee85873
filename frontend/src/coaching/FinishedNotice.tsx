import { Link } from "react-router-dom";
import type { Execution } from "../api/types";
import { statusLabel } from "../components/StatusBadge";
import { FailureBanner } from "../recovery/FailureBanner";

/** After the last step: how the execution ended, the way back to the queue and to its next item (`n`). A failed
 * execution names its failed step and the reason, with the ways on (retry, resume from a step, re-run). */
export function FinishedNotice({
  status,
  hasNext,
  onNext,
  execution,
  onMessage,
}: {
  status: string;
  hasNext: boolean;
  onNext: () => void;
  execution?: Execution;
  onMessage?: (message: string) => void;
}) {
  const ok = status === "completed";
  if (status === "failed" && execution) {
    return (
      <section className="card finished finished--stopped" aria-labelledby="finished-heading">
        <h2 id="finished-heading" tabIndex={-1}>
          <span aria-hidden="true">■ </span>
          Execution failed
        </h2>
        <FailureBanner execution={execution} onMessage={onMessage} headingLevel={3} />
        <p className="finished__actions">
          <Link to="/queue" className="button button--secondary">
            Back to the queue
          </Link>
          <button type="button" className="button button--secondary" onClick={onNext} aria-keyshortcuts="n">
            {hasNext ? "Next in the queue" : "Open the queue"} <kbd>n</kbd>
          </button>
        </p>
      </section>
    );
  }
  return (
    <section className={`card finished finished--${ok ? "ok" : "stopped"}`} aria-labelledby="finished-heading">
      <h2 id="finished-heading" tabIndex={-1}>
        <span aria-hidden="true">{ok ? "✓ " : "■ "}</span>
        Execution {statusLabel(status).toLowerCase()}
      </h2>
      <p>{ok ? "Every step has been decided and run." : "Nothing is left to decide in this execution."}</p>
      <p className="finished__actions">
        <Link to="/queue" className="button button--secondary">
          Back to the queue
        </Link>
        <button type="button" className="button" onClick={onNext} aria-keyshortcuts="n">
          {hasNext ? "Next in the queue" : "Open the queue"} <kbd>n</kbd>
        </button>
      </p>
    </section>
  );
}
