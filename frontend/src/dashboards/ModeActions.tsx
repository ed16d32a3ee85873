/**
 * A lead's mode buttons for one scope with its own evidence: a workflow's step (StepModes), a region
 * (regions/RegionsSection) or a gateway tool (tools/GatewayLearningSection). Pinned: Unpin. In AUTO: Back to
 * coaching. Otherwise Promote when its evidence says AUTO-ready (the caller confirms it), Force into AUTO… for an
 * admin when it does not, and Pin. Buttons only, so every action is keyboard reachable.
 */
import { useId, type ReactNode } from "react";
import { useIsAdmin } from "../auth/useAuth";

export type ScopeMode = "coaching" | "auto" | "always_review";

export function ModeActions({
  mode,
  autoReady,
  name,
  onMode,
  notReady,
  className = "step-actions",
  children,
}: {
  mode: ScopeMode;
  autoReady: boolean;
  /** The subject the hidden part of each button's name says: "fetch of Invoice intake", "region small refunds". */
  name: string;
  onMode: (mode: ScopeMode, force?: boolean) => void;
  /**
   * Why it may not be promoted yet, in words. Given, a Promote that is not ready stays shown and in the Tab order
   * (aria-disabled, described by this); left out, it is not shown until the evidence says AUTO-ready.
   */
  notReady?: string;
  className?: string;
  /** More buttons after the mode's (a region's Edit… and Remove…). */
  children?: ReactNode;
}) {
  const admin = useIsAdmin();
  const reasonId = useId();
  const button = (to: ScopeMode, label: string, hidden: string, primary = false) => (
    <button
      type="button"
      className={primary ? "button button--small" : "button button--secondary button--small"}
      data-mode-action={to}
      onClick={() => onMode(to)}
    >
      {label} <span className="visually-hidden">{hidden}</span>
    </button>
  );
  if (mode === "always_review")
    return (
      <span className={className}>
        {button("coaching", "Unpin", name)}
        {children}
      </span>
    );
  return (
    <span className={className}>
      {mode === "auto" ? (
        button("coaching", "Back to coaching", name)
      ) : autoReady ? (
        <button type="button" className="button button--small" data-mode-action="auto" aria-haspopup="dialog"
          onClick={() => onMode("auto")}>
          Promote <span className="visually-hidden">{name} to AUTO</span>
        </button>
      ) : (
        <>
          {notReady !== undefined ? (
            <>
              {/* aria-disabled, not disabled: it stays in the Tab order and says why it does nothing */}
              <button type="button" className="button button--small" data-mode-action="auto" aria-disabled="true"
                aria-describedby={reasonId}>
                Promote <span className="visually-hidden">{name} to AUTO</span>
              </button>
              <span id={reasonId} className="visually-hidden">
                {notReady}
              </span>
            </>
          ) : null}
          {admin ? (
            <button type="button" className="button button--secondary button--small" data-mode-action="force"
              aria-haspopup="dialog" onClick={() => onMode("auto", true)}>
              Force into AUTO… <span className="visually-hidden">{name}</span>
            </button>
          ) : null}
        </>
      )}
      {button("always_review", "Pin", `${name} to always review`)}
      {children}
    </span>
  );
}
