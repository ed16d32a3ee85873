/** Promote a workflow to AUTO or demote it to coaching: a button per workflow, one confirmation, one result. */
import { useState, type ReactNode } from "react";
import { ApiError, errorMessage } from "../api/client";
import { autoReadyGap, levelLabel } from "./Badges";
import { useIsAdmin, useIsLead } from "../auth/useAuth";
import { ConfirmDialog } from "./ConfirmDialog";
import { ForceReason } from "./ForceReason";
import { useSetMode, type NotReadyStep } from "./queries";
import type { MetricsSnapshot, StepMetrics, WorkflowMode } from "../api/metrics";
import { plural } from "../format";

/** What the buttons need to know about a workflow. */
export type ModeTarget = Pick<MetricsSnapshot, "level" | "auto_ready" | "to_auto" | "evidence"> & {
  workflowId: string;
  name: string;
  mode: WorkflowMode;
  /** its steps' own evidence, when known: the promotion lists those that are not ready */
  steps?: Record<string, StepMetrics>;
  /** its tool steps (a step without any decision has no metrics yet) */
  toolSteps?: string[];
};

/** The steps a promotion would leave without evidence of their own (pinned steps are always reviewed anyway). */
export function notReadySteps(target: ModeTarget): NotReadyStep[] {
  const ids = target.toolSteps ?? Object.keys(target.steps ?? {}).filter((id) => !id.includes(":"));
  return ids.flatMap((id) => {
    const m = target.steps?.[id];
    if (m?.mode === "always_review") return [];
    if (!m) return [{ step_id: id, level: "OBSERVATION", decisions: 0, decisions_needed: null }];
    if (m.auto_ready) return [];
    return [{ step_id: id, level: m.level, decisions: m.decisions, decisions_needed: m.decisions_needed ?? null }];
  });
}

function NotReadyList({ steps }: { steps: NotReadyStep[] }) {
  return (
    <ul className="not-ready-steps">
      {steps.map((s) => (
        <li key={s.step_id}>
          <code>{s.step_id}</code>: {levelLabel(s.level)}, {plural(s.decisions, "decision")}
          {s.decisions_needed ? ` (about ${plural(s.decisions_needed, "more accepted decision")} needed)` : ""}
        </li>
      ))}
    </ul>
  );
}

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
  const [reason, setReason] = useState("");
  const [reasonMissing, setReasonMissing] = useState(false);

  const ask = (target: ModeTarget) => {
    setMode.reset();
    setReason("");
    setReasonMissing(false);
    setAsked(target);
  };

  const promoting = asked ? nextMode(asked.mode) === "auto" : false;
  const forcing = promoting && !!asked && !asked.auto_ready;

  const confirm = () => {
    if (!asked) return;
    if (forcing && !reason.trim()) {
      setReasonMissing(true);
      document.getElementById("force-reason")?.focus();
      return;
    }
    setMode.mutate(
      {
        workflowId: asked.workflowId,
        name: asked.name,
        mode: nextMode(asked.mode),
        ...(forcing ? { force: true, reason: reason.trim() } : {}),
      },
      { onSettled: () => setAsked(null) },
    );
  };

  const gap = asked ? autoReadyGap(asked) : "";
  const notReady = asked && promoting ? notReadySteps(asked) : [];
  const done = setMode.variables;
  const leftBehind = setMode.data?.steps_not_ready ?? [];

  const ui = (
    <>
      <div className="mode-outcome" role="status">
        {setMode.isSuccess && done
          ? done.mode === "auto"
            ? `“${done.name}” is now in AUTO mode${done.force ? " (forced)" : ""}: it runs unattended, with spot checks.` +
              (leftBehind.length
                ? ` ${plural(leftBehind.length, "step")} not ready on its own evidence: ${leftBehind.map((s) => s.step_id).join(", ")}.`
                : "")
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
          title={
            forcing
              ? `Force “${asked.name}” into AUTO?`
              : promoting
                ? `Promote “${asked.name}” to AUTO?`
                : `Demote “${asked.name}” to coaching?`
          }
          confirmLabel={forcing ? "Force into AUTO" : promoting ? "Promote to AUTO" : "Demote to coaching"}
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
                  As an admin you may overrule the evidence; say why.
                </p>
              )}
              {notReady.length ? (
                <div className="dialog__warning" data-testid="steps-not-ready">
                  <p>
                    {plural(notReady.length, "step")} {notReady.length === 1 ? "is" : "are"} not AUTO-ready on
                    {notReady.length === 1 ? " its" : " their"} own evidence and will run unattended too:
                  </p>
                  <NotReadyList steps={notReady} />
                </div>
              ) : null}
              {forcing ? (
                <ForceReason value={reason} missing={reasonMissing} onChange={(v) => {
                  setReason(v);
                  if (v.trim()) setReasonMissing(false);
                }} />
              ) : null}
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
  const admin = useIsAdmin();
  const promote = target.mode !== "auto";
  if (!lead) return null; // a lead's decision: operators see the mode, not the button
  if (promote && !target.auto_ready) {
    // the evidence does not allow it: no button the server would refuse; an admin may force it, with a reason
    return admin ? (
      <button
        type="button"
        className="button button--secondary"
        onClick={() => onAsk(target)}
        data-mode-action="force"
      >
        Force <span className="visually-hidden">{target.name}</span> into AUTO…
      </button>
    ) : (
      <span className="muted mode-not-ready" data-mode-action="none">
        Not AUTO-ready: promotion waits for the evidence
      </span>
    );
  }
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
