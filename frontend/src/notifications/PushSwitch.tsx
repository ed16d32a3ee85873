import { useEffect, useId, useState } from "react";
import { errorMessage } from "../api/client";
import { currentPushState, pushSupported, turnPushOff, turnPushOn, type PushState } from "./webPush";

const WHY_NOT: Record<Exclude<PushState, "on">, string> = {
  blocked: "This browser blocks Coach's notifications: allow them in the site settings, then turn this on.",
  unsupported: "This browser does not support Web Push: Coach cannot reach it when no Coach tab is open.",
  off: "Not turned on: the browser's permission was not given.",
};

/**
 * Settings → Notifications: "Notify this browser" (Web Push). On: the server pushes the events you chose to this
 * browser through its push service, shown by the service worker even with no Coach tab open. Asking the browser's
 * permission happens only when it is turned on; when it cannot be on, a line says why.
 */
export function PushSwitch() {
  const [state, setState] = useState<PushState | null>(pushSupported() ? null : "unsupported");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const hintId = useId();

  useEffect(() => {
    let live = true;
    currentPushState()
      .then((now) => live && setState(now))
      .catch(() => live && setState("off"));
    return () => {
      live = false;
    };
  }, []);

  const on = state === "on";
  const toggle = async () => {
    if (busy || state === "unsupported") return;
    setBusy(true);
    setProblem(null);
    try {
      const after = await (on ? turnPushOff() : turnPushOn());
      setState(after);
      if (!on && after !== "on") setProblem(WHY_NOT[after]);
    } catch (err) {
      setProblem(`This browser could not ${on ? "stop" : "start"} push notifications: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };

  const hint = problem ?? (state === "unsupported" || state === "blocked" ? WHY_NOT[state] : null);
  return (
    <div className="settings__choice push-switch">
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-describedby={hint ? hintId : undefined}
        aria-busy={busy || state === null || undefined}
        disabled={state === "unsupported"}
        className="notifications-switch__button"
        onClick={() => void toggle()}
      >
        <span className="notifications-switch__track" aria-hidden="true">
          <span className="notifications-switch__thumb" />
        </span>
        Notify this browser
      </button>
      <span className="muted"> even when no Coach tab is open (Web Push)</span>
      {hint ? (
        <p id={hintId} className="notice notice--error" role="alert">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
