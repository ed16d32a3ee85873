import { useId, useState } from "react";
import { turnNotificationsOff, turnNotificationsOn, type NotificationsState } from "./preference";

const WHY_NOT: Record<string, string> = {
  blocked: "This browser blocks Coach's notifications: allow them in the site settings, then turn them on.",
  unsupported: "This browser cannot show notifications.",
  off: "Notifications stay off: the browser's permission was not given.",
};

/**
 * The header's "Notifications" switch: browser notifications for new work in an empty queue and for demotions.
 * Turning it on asks the browser's permission (only then); when it cannot be on, a line says why.
 */
export function NotificationsSwitch({ state }: { state: NotificationsState }) {
  const [asking, setAsking] = useState(false);
  const [refused, setRefused] = useState<NotificationsState | null>(null);
  const hintId = useId();
  const on = state === "on";

  const toggle = async () => {
    if (asking) return;
    if (on) {
      turnNotificationsOff();
      setRefused(null);
      return;
    }
    setAsking(true);
    const after = await turnNotificationsOn();
    setAsking(false);
    setRefused(after === "on" ? null : after);
  };

  return (
    <div className="notifications-switch">
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-describedby={refused ? hintId : undefined}
        aria-busy={asking || undefined}
        className="notifications-switch__button"
        title="Browser notifications: new work in an empty queue, demotions"
        onClick={() => void toggle()}
      >
        <span className="notifications-switch__track" aria-hidden="true">
          <span className="notifications-switch__thumb" />
        </span>
        Notifications
      </button>
      {/* only after a refused attempt: an alert is read out as it appears (no empty live region in the header) */}
      {refused ? (
        <p id={hintId} className="notifications-switch__hint" role="alert">
          {WHY_NOT[refused]}
        </p>
      ) : null}
    </div>
  );
}
