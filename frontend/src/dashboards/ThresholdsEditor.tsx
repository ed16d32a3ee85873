import { useId, useState, type FormEvent } from "react";
import { ApiError, errorMessage } from "../api/client";
import { useSetThresholds, type Thresholds } from "./queries";

const DEFAULTS: Thresholds = { coaching_after: 10, auto_min_window: 20, auto_acceptance: 0.85, window: 50, auto_alpha: 0.05 };

type Draft = Record<keyof Thresholds, string>;
type Problems = Partial<Record<keyof Thresholds, string>>;

const FIELDS: { key: keyof Thresholds; label: string; hint: string; unit?: string }[] = [
  { key: "auto_acceptance", label: "AUTO-ready acceptance", hint: "acceptance the evidence must show, 0–100", unit: "%" },
  { key: "auto_alpha", label: "Error level", hint: "chance of a wrong AUTO-ready or demotion, more than 0 and under 0.5 (0.05 = 5%)" },
  { key: "auto_min_window", label: "Decisions needed", hint: "counted decisions (skips do not count) in the window" },
  { key: "window", label: "Rolling window", hint: "the last N decisions, 1–1000" },
  { key: "coaching_after", label: "Coaching after", hint: "decisions before OBSERVATION becomes COACHING" },
];

function toDraft(t: Thresholds): Draft {
  return {
    auto_acceptance: String(Math.round(t.auto_acceptance * 1000) / 10),
    auto_min_window: String(t.auto_min_window),
    window: String(t.window),
    coaching_after: String(t.coaching_after),
    auto_alpha: String(t.auto_alpha),
  };
}

/** The draft as thresholds, or what is wrong with it (the same rules as the server). */
export function checkThresholds(draft: Draft): { value?: Thresholds; problems: Problems } {
  const problems: Problems = {};
  const whole = (key: keyof Thresholds, min: number, max = Infinity) => {
    const n = Number(draft[key]);
    if (draft[key].trim() === "" || !Number.isInteger(n)) problems[key] = "must be a whole number";
    else if (n < min || n > max) problems[key] = max === Infinity ? `must be ${min} or more` : `must be ${min}–${max}`;
    return n;
  };
  const percent = Number(draft.auto_acceptance);
  if (draft.auto_acceptance.trim() === "" || !Number.isFinite(percent) || percent < 0 || percent > 100) {
    problems.auto_acceptance = "must be a percentage from 0 to 100";
  }
  const alphaText = draft.auto_alpha ?? String(DEFAULTS.auto_alpha);
  const alpha = Number(alphaText);
  if (alphaText.trim() === "" || !Number.isFinite(alpha) || alpha <= 0 || alpha >= 0.5) {
    problems.auto_alpha = "must be more than 0 and less than 0.5";
  }
  const value: Thresholds = {
    auto_acceptance: Math.round(percent * 10) / 1000,
    auto_min_window: whole("auto_min_window", 1),
    window: whole("window", 1, 1000),
    coaching_after: whole("coaching_after", 0),
    auto_alpha: alpha,
  };
  if (!problems.auto_min_window && !problems.window && value.auto_min_window > value.window) {
    problems.auto_min_window = "cannot be more than the rolling window, or AUTO could never be reached";
  }
  return Object.keys(problems).length ? { problems } : { value, problems };
}

/** The server's 422 details (`{json: {field: [...]}}` or `{field: [...]}`) per field. */
function serverProblems(error: unknown): Problems {
  if (!(error instanceof ApiError) || error.status !== 422 || typeof error.details !== "object" || !error.details) return {};
  const details = error.details as Record<string, unknown>;
  const fields = (typeof details.json === "object" && details.json ? details.json : details) as Record<string, unknown>;
  const out: Problems = {};
  for (const { key } of FIELDS) {
    const v = fields[key];
    if (v) out[key] = Array.isArray(v) ? v.join(" ") : String(v);
  }
  return out;
}

/** A lead changes when a workflow counts as AUTO-ready (PUT /api/workflows/<id>/thresholds). */
export function ThresholdsEditor({ workflowId, current }: { workflowId: string; current?: Partial<Thresholds> }) {
  const id = useId();
  const start = { ...DEFAULTS, ...(current ?? {}) };
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState<Draft>(() => toDraft(start));
  const [problems, setProblems] = useState<Problems>({});
  const [saved, setSaved] = useState(false);
  const save = useSetThresholds();

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const checked = checkThresholds(draft);
    setProblems(checked.problems);
    if (!checked.value) return;
    save.mutate(
      { workflowId, thresholds: checked.value },
      {
        onSuccess: () => {
          setSaved(true);
          setOpen(false);
        },
        onError: (error) => setProblems(serverProblems(error)),
      },
    );
  };

  const failure = save.error && !Object.keys(serverProblems(save.error)).length ? save.error : null;
  return (
    <section className="thresholds" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} className="visually-hidden">
        Thresholds
      </h2>
      <p role="status" className="muted">
        {saved ? "Thresholds saved: levels are judged by the new values from now on." : ""}
      </p>
      {!open ? (
        <button
          type="button"
          className="button button--secondary"
          onClick={() => {
            setDraft(toDraft(start));
            setProblems({});
            setOpen(true);
          }}
        >
          Change thresholds
        </button>
      ) : (
        <form onSubmit={onSubmit} aria-label="Change thresholds" noValidate className="filters">
          {FIELDS.map(({ key, label, hint, unit }) => (
            <div className="field" key={key}>
              <label htmlFor={`${id}-${key}`}>
                {label}
                {unit ? ` (${unit})` : ""}
              </label>
              <input
                id={`${id}-${key}`}
                inputMode="decimal"
                value={draft[key]}
                aria-invalid={problems[key] ? true : undefined}
                aria-describedby={`${id}-${key}-hint${problems[key] ? ` ${id}-${key}-error` : ""}`}
                onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
              />
              <small id={`${id}-${key}-hint`} className="muted">
                {hint}
              </small>
              {problems[key] ? (
                <small id={`${id}-${key}-error`} className="field-error" role="alert">
                  {label}: {problems[key]}
                </small>
              ) : null}
            </div>
          ))}
          {failure ? (
            <p role="alert" className="notice notice--error">
              Could not save the thresholds: {errorMessage(failure)}
            </p>
          ) : null}
          <div className="filters__actions">
            <button type="submit" className="button" aria-disabled={save.isPending || undefined}>
              {save.isPending ? "Saving…" : "Save thresholds"}
            </button>
            <button type="button" className="button button--secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
