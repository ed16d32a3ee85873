import { Link } from "react-router-dom";
import { statusLabel } from "../components/StatusBadge";

/** After the last step: how the execution ended, the way back to the queue and to its next item (`n`). */
export function FinishedNotice({ status, hasNext, onNext }: { status: string; hasNext: boolean; onNext: () => void }) {
  const ok = status === "completed";
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
