/**
 * Settings → Attentive reviews (leads and admins; docs/autonomy.md "Attentive reviews", "Check suggestions"): the
 * workspace's settings at /api/workspace/reviews. The fast-accept floor, the rate of check suggestions, whether only
 * attentive operators' decisions are readiness evidence, and the bars that make an operator attentive. Save sends
 * what changed (an emptied field: back to its default); the server's 422 shows beside the field it names.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { api, unwrap } from "../api/typed";
import { ErrorNotice, Loading } from "../components/QueryState";
import { useReviewFloor, type ReviewFloor } from "../dashboards/queries";
import { serverFieldErrors } from "../policies/fieldErrors";

const NUMBERS = ["attentive_floor_ms", "check_rate", "min_checks", "min_catch_rate", "max_fast_share"] as const;
type NumberField = (typeof NUMBERS)[number];
type Field = NumberField | "evidence_from";
const FIELDS: Field[] = [...NUMBERS, "evidence_from"];
type Change = Partial<Record<NumberField, number | null>> & { evidence_from?: "all" | "attentive" | null };

const LABELS: Record<Field, string> = {
  attentive_floor_ms: "Fast-accept floor (ms)",
  check_rate: "Check suggestions: share of suggestions",
  evidence_from: "Readiness evidence from",
  min_checks: "Checks before the catch rate counts",
  min_catch_rate: "Catch rate, at least",
  max_fast_share: "Share of fast accepts, at most",
};

/** Each number field's hint: what it does and its range, as the server holds it. */
function hint(name: NumberField, s: ReviewFloor, defaults: Partial<NonNullable<ReviewFloor["defaults"]>>): string {
  const d = (k: "check_rate" | "min_checks" | "min_catch_rate" | "max_fast_share") => String(defaults[k] ?? "");
  switch (name) {
    case "attentive_floor_ms":
      return `An accept faster than this, from when its suggestion was shown, counts as a fast accept. ${s.min_ms ?? 100} to ${s.max_ms ?? 600000}; empty: the default, ${s.default_ms ?? 1500}.`;
    case "check_rate":
      return `0 is off. At most ${s.max_check_rate ?? 0.2}: 0.05 shows about one suggestion in 20 with one value reviewers corrected away before; it never runs. Empty: the default, ${d("check_rate")}.`;
    case "min_checks":
      return `A whole number, 1 to 10000. Empty: the default, ${d("min_checks")}.`;
    case "min_catch_rate":
      return `Caught checks of all checks, 0 to 1. Empty: the default, ${d("min_catch_rate")}.`;
    case "max_fast_share":
      return `Of their accepts, the share under the floor, 0 to 1. Empty: the default, ${d("max_fast_share")}.`;
  }
}

function shown(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

export function ReviewSettings() {
  const settings = useReviewFloor();
  return (
    <section aria-labelledby="review-settings-heading" id="attentive-reviews">
      <h2 id="review-settings-heading">Attentive reviews</h2>
      <p className="muted">
        Acceptance means little if reviewers rubber-stamp. Check suggestions show whether they read; with evidence
        from attentive reviewers only, the decisions of operators below these bars stay out of the readiness tests of
        workflows, steps and regions (they still count everywhere else).
      </p>
      {settings.isPending ? (
        <Loading label="Loading the review settings…" />
      ) : settings.isError ? (
        <ErrorNotice title="Could not load the review settings" error={settings.error} onRetry={() => void settings.refetch()} />
      ) : (
        <ReviewForm saved={settings.data} />
      )}
    </section>
  );
}

function ReviewForm({ saved }: { saved: ReviewFloor }) {
  const id = useId();
  const queryClient = useQueryClient();
  const initial = (s: ReviewFloor) =>
    Object.fromEntries(FIELDS.map((f) => [f, shown(s[f])])) as Record<Field, string>;
  const [values, setValues] = useState<Record<Field, string>>(() => initial(saved));
  const [local, setLocal] = useState<Partial<Record<Field, string>>>({});
  const [note, setNote] = useState("");
  const defaults = saved.defaults ?? {};
  const save = useMutation({
    mutationFn: (body: Change) => unwrap(api.PUT("/api/workspace/reviews", { body })),
    onSuccess: (data, body) => {
      queryClient.setQueryData(["workspace", "reviews"], data);
      void queryClient.invalidateQueries({ queryKey: ["metrics"] }); // the reviewers' figures and evidence_from
      setValues(initial(data));
      const names = Object.keys(body) as Field[];
      setNote(
        names.length === FIELDS.length && names.every((k) => body[k] === null)
          ? "Every setting is back to its default."
          : `Saved: ${names.map((k) => LABELS[k].toLowerCase()).join("; ")}.`,
      );
    },
    onError: (error) => {
      const first = FIELDS.find((f) => serverFieldErrors(error)[f]);
      if (first) document.getElementById(`${id}-${first}`)?.focus();
    },
  });
  const server = serverFieldErrors(save.error);
  const problems: Partial<Record<Field, string>> = { ...server, ...local };
  const unplaced = save.isError
    ? Object.entries(server).filter(([k]) => !FIELDS.includes(k as Field))
    : [];
  const failure = save.isError && Object.keys(server).length === 0 ? save.error : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (save.isPending) return;
    const found: Partial<Record<Field, string>> = {};
    const body: Change = {};
    for (const f of NUMBERS) {
      const text = values[f].trim();
      if (text === shown(saved[f])) continue;
      if (text === "") body[f] = null;
      else if (!Number.isFinite(Number(text))) found[f] = "must be a number";
      else body[f] = Number(text);
    }
    if (values.evidence_from !== shown(saved.evidence_from))
      body.evidence_from = values.evidence_from as "all" | "attentive";
    setLocal(found);
    setNote("");
    save.reset();
    const first = FIELDS.find((f) => found[f]);
    if (first) {
      document.getElementById(`${id}-${first}`)?.focus();
      return;
    }
    if (!Object.keys(body).length) {
      setNote("Nothing changed.");
      return;
    }
    save.mutate(body);
  };
  const backToDefaults = () => {
    if (save.isPending) return;
    setLocal({});
    setNote("");
    save.mutate(Object.fromEntries(FIELDS.map((f) => [f, null])) as Change);
  };

  const describedBy = (f: Field) => `${id}-${f}-hint${problems[f] ? ` ${id}-${f}-error` : ""}`;
  const error = (f: Field) =>
    problems[f] ? (
      <small id={`${id}-${f}-error`} className="field-error" role="alert">
        ✕ {LABELS[f]}: {problems[f]}
      </small>
    ) : null;
  const numberField = (f: NumberField) => (
    <div className="field" key={f}>
      <label htmlFor={`${id}-${f}`}>{LABELS[f]}</label>
      <input id={`${id}-${f}`} type="text" inputMode={f === "attentive_floor_ms" || f === "min_checks" ? "numeric" : "decimal"}
        value={values[f]} aria-invalid={problems[f] ? true : undefined} aria-describedby={describedBy(f)}
        onChange={(e) => setValues({ ...values, [f]: e.target.value })} />
      <small id={`${id}-${f}-hint`} className="muted">
        {hint(f, saved, defaults)}
      </small>
      {error(f)}
    </div>
  );

  return (
    <form className="form review-settings" onSubmit={submit} noValidate aria-label="Attentive reviews">
      {numberField("attentive_floor_ms")}
      {numberField("check_rate")}
      <fieldset className="settings__choices" aria-describedby={describedBy("evidence_from")}>
        <legend>{LABELS.evidence_from}</legend>
        {(
          [
            ["all", "Every decision"],
            ["attentive", "Only attentive reviewers' decisions"],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="settings__choice">
            <input type="radio" name={`${id}-evidence_from`} id={value === "all" ? `${id}-evidence_from` : undefined}
              value={value} checked={values.evidence_from === value}
              onChange={() => setValues({ ...values, evidence_from: value })} />
            <span>{label}</span>
          </label>
        ))}
        <small id={`${id}-evidence_from-hint`} className="muted">
          An operator is attentive with at least the checks below, a catch rate at least the bar and a share of fast
          accepts at most the bar. Switching changes no past evidence: only decisions from then on are left out.
        </small>
        {error("evidence_from")}
      </fieldset>
      <fieldset className="review-settings__bars">
        <legend>Bars of an attentive reviewer</legend>
        {numberField("min_checks")}
        {numberField("min_catch_rate")}
        {numberField("max_fast_share")}
      </fieldset>
      {unplaced.length ? (
        <div role="alert" className="notice notice--error">
          <p className="notice__title">The server refused the settings:</p>
          <ul className="error-list">
            {unplaced.map(([f, m]) => (
              <li key={f}>{f === "(body)" ? m : `${f}: ${m}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {failure ? (
        <p role="alert" className="notice notice--error">
          Not saved: {errorMessage(failure)}
        </p>
      ) : null}
      <div className="filters__actions">
        <button type="button" className="button button--secondary" onClick={backToDefaults}
          aria-disabled={save.isPending || undefined}>
          Back to the defaults
        </button>
        <button type="submit" className="button" aria-disabled={save.isPending || undefined}>
          {save.isPending ? "Saving…" : "Save"}
        </button>
      </div>
      <p role="status" className="mode-outcome">
        {note}
      </p>
    </form>
  );
}
