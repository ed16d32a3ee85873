/** Promote a workflow to AUTO or demote it to coaching: a button per workflow, one confirmation, one result. */
import { useState, type ReactNode } from "react";
import { ApiError, errorMessage } from "../api/client";
import { autoReadyGap, levelLabel } from "./Badges";
import { useIsLead } from "../auth/useAuth";
import { ConfirmDialog } from "./ConfirmDialog";
import { useSetMode } from "./queries";
import type { MetricsSnapshot, WorkflowMode } from "../api/metrics";

/** What the buttons need to know about a workflow. */
export type ModeTarget = Pick<MetricsSnapshot, "level" | "auto_ready" | "to_auto" | "evidence"> & {
  workflowId: string;
  name: string;
  mode: WorkflowMode;
};

const nextMode = (mode: WorkflowMode): WorkflowMode => (mode === "auto" ? "coaching" : "auto");

/** Why a promotion or demotion failed, in words: the server's message, with the level a 409 names. */
function failureText(error: unknown): string {
  const message = errorMessage(error);
  if (error instanceof ApiError && error.status === 409) {
    const details = error.details as { level?: string } | undefined;
    const level = typeof details?.level === "string" ? ` Its level is ${levelLabel(details.level)}.` : "";
    const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
    return `${sentence}${level} A workflow is promoted once its evidence says AUTO-ready.`;
  }
  return message;
}

/**
 * The state of one page's mode changes: `ask(target)` opens the
 * confirmation; `ui` holds the dialog and the outcome (announced politely
 * on success, as an alert on failure).
 */
export function useModeChanger(): { ask: (target: ModeTarget) => void; ui: ReactNode } {
  const setMode = useSetMode();
  const [asked, setAsked] = useState<ModeTarget | null>(null);

  const ask = (target: ModeTarget) => {
    setMode.reset();
    setAsked(target);
  };

  const confirm = () => {
    if (!asked) return;
    setMode.mutate(
      { workflowId: asked.workflowId, name: asked.name, mode: nextMode(asked.mode) },
      { onSettled: () => setAsked(null) },
    );
  };

  const promoting = asked ? nextMode(asked.mode) === "auto" : false;
  const gap = asked ? autoReadyGap(asked) : "";
  const done = setMode.variables;

  const ui = (
    <>
      <div className="mode-outcome" role="status">
        {setMode.isSuccess && done
          ? done.mode === "auto"
            ? `“${done.name}” is now in AUTO mode: it runs unattended, with spot checks.`
            : `“${done.name}” is back in coaching mode: every step is suggested and decided.`
          : null}
      </div>
      {setMode.isError && done ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">
            Could not {done.mode === "auto" ? "promote" : "demote"} “{done.name}”
          </p>
          <p>{failureText(setMode.error)}</p>
        </div>
      ) : null}
      {asked ? (
        <ConfirmDialog
          title={promoting ? `Promote “${asked.name}” to AUTO?` : `Demote “${asked.name}” to coaching?`}
          confirmLabel={promoting ? "Promote to AUTO" : "Demote to coaching"}
          busy={setMode.isPending}
          onConfirm={confirm}
          onCancel={() => setAsked(null)}
        >
          {promoting ? (
            <>
              <p>
                In AUTO, its executions run unattended; policy-forced reviews and a sample of spot checks still go
                to a person, and falling spot-check acceptance demotes it again.
              </p>
              {asked.auto_ready ? (
                <p>Its evidence says AUTO-ready.</p>
              ) : (
                <p className="dialog__warning">
                  It is not AUTO-ready yet (level {levelLabel(asked.level)}){gap ? `: ${gap.toLowerCase()}` : ""}.
                  The server will refuse the promotion.
                </p>
              )}
            </>
          ) : (
            <p>Every step of its executions will again be suggested to an operator and decided.</p>
          )}
        </ConfirmDialog>
      ) : null}
    </>
  );

  return { ask, ui };
}

/**
 * "Promote to AUTO", or in AUTO "Demote": one element whose label changes, so
 * focus stays on it after a change. Its name includes the workflow's.
 */
export function ModeButton({ target, onAsk }: { target: ModeTarget; onAsk: (t: ModeTarget) => void }) {
  const lead = useIsLead();
  const promote = target.mode !== "auto";
  if (!lead) return null; // a lead's decision: operators see the mode, not the button
  return (
    <button
      type="button"
      className={promote ? "button" : "button button--secondary"}
      onClick={() => onAsk(target)}
      data-mode-action={promote ? "promote" : "demote"}
    >
      {/* The spaces sit outside the hidden span: accessible-name algorithms trim inside it. */}
      {promote ? (
        <>
          Promote <span className="visually-hidden">{target.name}</span> to AUTO
        </>
      ) : (
        <>
          Demote <span className="visually-hidden">{target.name} to coaching</span>
        </>
      )}
    </button>
  );
}
