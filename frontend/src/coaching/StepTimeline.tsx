import { memo } from "react";
import { StatusBadge } from "../components/StatusBadge";
import { formatValue } from "../format";
import type { CoachingStep } from "./types";

const DECISION_WORDS: Record<string, string> = {
  accept: "accepted",
  reject: "rejected",
  correct: "corrected",
  manual: "done by hand",
  skip: "skipped",
};

function shown(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "";
}

/** The execution's steps in order, with their status, decision and output; the current one marked. */
export const StepTimeline = memo(function StepTimeline({ steps, currentStepId }: { steps: CoachingStep[]; currentStepId: string | null }) {
  return (
    <section className="card timeline" aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Steps</h2>
      {steps.length === 0 ? (
        <p className="empty">No steps yet.</p>
      ) : (
        <ol className="timeline__list">
          {steps.map((step) => (
            <TimelineStep key={step.step_id} step={step} current={step.step_id === currentStepId} />
          ))}
        </ol>
      )}
    </section>
  );
});

/**
 * One step. Memoized: a push changes a step or two (the others keep their objects: patchedExecution), so only those
 * are drawn again, not the whole list, between a key press and the next suggestion.
 */
const TimelineStep = memo(function TimelineStep({ step, current }: { step: CoachingStep; current: boolean }) {
  const headingId = `timeline-${step.step_id}`;
  return (
    <li
      className={`timeline__step${current ? " timeline__step--current" : ""}`}
      aria-current={current ? "step" : undefined}
      aria-labelledby={headingId}
      data-step-id={step.step_id}
    >
      <div className="timeline__head">
        <h3 id={headingId} className="timeline__name">
          {step.name && step.name !== step.step_id ? step.name : <span className="mono">{step.step_id}</span>}
        </h3>
        <StatusBadge status={step.status} />
        {current ? <span className="tag tag--current">▶ current</span> : null}
      </div>
      <p className="timeline__meta muted">
        <span className="mono">{step.step_id}</span>
        {step.tool ? (
          <>
            {" "}
            · tool <span className="mono">{step.tool}</span>
          </>
        ) : null}
        {step.decision ? <> · decision: {DECISION_WORDS[step.decision] ?? step.decision}</> : null}
      </p>
      {shown(step.output) ? (
        <details className="timeline__output" open={step.status !== "skipped"}>
          <summary>Output</summary>
          <pre className="code">{formatValue(step.output)}</pre>
        </details>
      ) : null}
      {shown(step.error) ? <p className="timeline__error">{String(step.error)}</p> : null}
    </li>
  );
});
