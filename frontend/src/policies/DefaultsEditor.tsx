import { useEffect, useId, useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { effectLabel } from "../approvals/PolicyVerdictView";
import type { PolicyEffect } from "../approvals/types";
import { ErrorNotice, Loading } from "../components/QueryState";
import { serverFieldErrors } from "./fieldErrors";
import { usePolicyDefaults, useSaveDefaults } from "./queries";
import { DEFAULT_EFFECTS, RISKS, type PolicyDefaults } from "./types";

const RISK_HINT: Record<string, string> = {
  read: "tools that only read (file.read, echo)",
  write: "tools that change data (file.write)",
  external: "tools that reach other systems (http.request)",
  destructive: "tools that can destroy data, and tools the registry does not know",
};

/** The workspace default: the effect per tool risk when no rule matches (GET/PUT /api/policies/default). */
export function DefaultsEditor({ canEdit }: { canEdit: boolean }) {
  const id = useId();
  const defaults = usePolicyDefaults();
  const save = useSaveDefaults();
  const [draft, setDraft] = useState<PolicyDefaults | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (defaults.data && !draft) setDraft(defaults.data);
  }, [defaults.data, draft]);

  if (defaults.isPending) return <Loading label="Loading the workspace default…" />;
  if (defaults.isError) {
    return <ErrorNotice title="Could not load the workspace default" error={defaults.error} onRetry={() => void defaults.refetch()} />;
  }
  const value = draft ?? defaults.data;
  const server = serverFieldErrors(save.error);
  const failure = save.error && Object.keys(server).length === 0 ? save.error : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (save.isPending) return;
    setSaved(false);
    save.mutate(value, { onSuccess: (answer) => { setDraft(answer); setSaved(true); } });
  };

  return (
    <form onSubmit={submit} aria-labelledby={`${id}-title`} className="policy-defaults" noValidate>
      <h2 id={`${id}-title`}>Workspace default</h2>
      <p className="muted">When no rule matches a call, its tool's risk decides.</p>
      <div className="rule-form__grid">
        {RISKS.map((risk) => (
          <div className="field" key={risk}>
            <label htmlFor={`${id}-${risk}`}>{risk.charAt(0).toUpperCase() + risk.slice(1)} tools</label>
            <select
              id={`${id}-${risk}`}
              value={value[risk]}
              disabled={!canEdit}
              aria-describedby={`${id}-${risk}-hint`}
              aria-invalid={server[risk] ? true : undefined}
              onChange={(e) => {
                setSaved(false);
                setDraft({ ...value, [risk]: e.target.value as PolicyEffect });
              }}
            >
              {DEFAULT_EFFECTS.map((e) => (
                <option key={e} value={e}>
                  {effectLabel(e)}
                </option>
              ))}
            </select>
            <small id={`${id}-${risk}-hint`} className="muted">
              {RISK_HINT[risk]}
            </small>
            {server[risk] ? (
              <small className="field-error" role="alert">
                ✕ {risk}: {server[risk]}
              </small>
            ) : null}
          </div>
        ))}
      </div>
      {failure ? (
        <p role="alert" className="notice notice--error">
          Could not save the default: {errorMessage(failure)}
        </p>
      ) : null}
      <p role="status" className="muted">
        {saved ? "Default saved: it applies to the next call." : ""}
      </p>
      {canEdit ? (
        <button type="submit" className="button button--secondary" aria-disabled={save.isPending || undefined}>
          {save.isPending ? "Saving…" : "Save the default"}
        </button>
      ) : null}
    </form>
  );
}
