import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type ChangeEvent, type FormEvent } from "react";
import { ApiError, errorMessage } from "../api/client";
import { PLAN_MODES, createPlan, planKeys, type Plan } from "./api";
import { detailRows, planSource } from "./source";

const EXAMPLE = `name: Greet
steps:
  - id: greet
    type: action
    tool: echo
    params:
      message: hello
`;

/**
 * A plan pasted or uploaded as JSON or YAML, with its mode. The server
 * validates it like a workflow: its 422 names each field (`steps[0].tool`),
 * listed under the text and linked to it, so the fix is one Tab away.
 */
export function NewPlanForm({ onCreated }: { onCreated: (plan: Plan) => void }) {
  const queryClient = useQueryClient();
  const [text, setText] = useState("");
  const [mode, setMode] = useState<string>("normal");
  const [localError, setLocalError] = useState<string | null>(null);
  const errorsId = useId();
  const create = useMutation({
    mutationFn: (body: ReturnType<typeof planSource>) => createPlan(body),
    onSuccess: (plan) => {
      void queryClient.invalidateQueries({ queryKey: planKeys.all });
      onCreated(plan);
    },
  });

  const rows =
    create.error instanceof ApiError && (create.error.status === 422 || create.error.status === 400)
      ? detailRows(create.error.details)
      : [];
  const modeErrors = rows.filter(([path]) => path === "mode");
  const planErrors = rows.filter(([path]) => path !== "mode");
  const failed = localError ?? (create.isError ? errorMessage(create.error) : null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (create.isPending) return;
    if (!text.trim()) {
      setLocalError("Paste a plan or choose a file first.");
      return;
    }
    try {
      const body = planSource(text, mode);
      setLocalError(null);
      create.mutate(body);
    } catch (err) {
      create.reset();
      setLocalError(err instanceof Error ? err.message : String(err));
    }
  };

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    setText(await file.text());
    setLocalError(null);
    create.reset();
  };

  return (
    <form className="card plan-form" onSubmit={submit} aria-labelledby="new-plan-heading" noValidate>
      <h2 id="new-plan-heading">New plan</h2>
      <p className="muted">
        Steps as in a workflow definition (JSON or YAML), e.g. written by a planner. It starts as a draft: approve it,
        then execute it.
      </p>
      <div className="field">
        <label htmlFor="plan-source">Plan (JSON or YAML)</label>
        <textarea
          id="plan-source"
          className="mono plan-form__source"
          rows={14}
          spellCheck={false}
          placeholder={EXAMPLE}
          value={text}
          aria-invalid={failed || planErrors.length ? true : undefined}
          aria-describedby={failed ? errorsId : undefined}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      <div className="plan-form__row">
        <div className="field">
          <label htmlFor="plan-file">Or upload a file</label>
          <input id="plan-file" type="file" accept=".json,.yaml,.yml,application/json,application/yaml,text/yaml" onChange={(e) => void onFile(e)} />
        </div>
        <div className="field">
          <label htmlFor="plan-mode">Mode</label>
          <select
            id="plan-mode"
            value={mode}
            aria-invalid={modeErrors.length ? true : undefined}
            onChange={(e) => setMode(e.target.value)}
          >
            {PLAN_MODES.map((m) => (
              <option key={m} value={m}>
                {m === "normal" ? "normal — runs unattended, policy permitting" : "coaching — every step is suggested"}
              </option>
            ))}
          </select>
          {modeErrors.map(([, message]) => (
            <p key={message} className="field__error">
              ✕ {message}
            </p>
          ))}
        </div>
      </div>
      <div id={errorsId} role="alert" className={failed ? "notice notice--error" : "visually-hidden"}>
        {failed ? (
          <>
            <p className="notice__title">{planErrors.length ? "The server refused the plan:" : failed}</p>
            {planErrors.length ? (
              <ul className="plan-form__errors" aria-label="Problems by field">
                {planErrors.map(([path, message]) => (
                  <li key={path}>
                    <a href="#plan-source" className="mono" onClick={(e) => {
                      e.preventDefault();
                      document.getElementById("plan-source")?.focus();
                    }}>
                      {path || "plan"}
                    </a>
                    : {message}
                  </li>
                ))}
              </ul>
            ) : null}
          </>
        ) : null}
      </div>
      <div className="plan-form__actions">
        <button type="submit" className="button" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create plan"}
        </button>
      </div>
    </form>
  );
}
