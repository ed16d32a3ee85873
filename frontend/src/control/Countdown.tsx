import "./control.css";
import { formatClock, secondsLeft, timeoutActionLabel, useNow } from "./deadline";
import { ClockIcon } from "../components/ClockIcon";

/**
 * "Times out in 4:32 → skip": a gate's deadline, ticking. It is a `timer`
 * (not read aloud on every tick); its full sentence is in its label, and the
 * last minute is marked so it stands out (by words too, not colour alone).
 */
export function Countdown({
  deadline,
  onTimeout,
  what = "This step",
}: {
  deadline: string | null | undefined;
  onTimeout?: string | null;
  /** Who times out, for the label ("This suggestion", "This question"). */
  what?: string;
}) {
  const now = useNow(Boolean(deadline));
  const left = secondsLeft(deadline, now);
  if (left === null) return null;
  const action = timeoutActionLabel(onTimeout);
  const due = left <= 0;
  const urgent = left < 60;
  const clock = formatClock(left);
  const label = due
    ? `${what} is timing out now${action ? `: ${action}` : ""}.`
    : `${what} times out in ${clock}${action ? `, then: ${action}` : ""}.`;
  return (
    <p
      className={`countdown${urgent ? " countdown--urgent" : ""}`}
      role="timer"
      aria-live="off"
      aria-label={label}
      data-testid="countdown"
    >
      <ClockIcon />{" "}
      {due ? "Timing out now" : <>Times out in <strong className="countdown__clock">{clock}</strong></>}
      {action ? <> → {action}</> : null}
      {urgent && !due ? <span className="countdown__hint"> (less than a minute)</span> : null}
    </p>
  );
}
