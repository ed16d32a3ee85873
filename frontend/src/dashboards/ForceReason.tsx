/** The reason an admin gives for overruling the evidence (a forced promotion): required, kept in the audit log. */
export function ForceReason({
  value,
  missing,
  onChange,
}: {
  value: string;
  missing: boolean;
  onChange: (value: string) => void;
}) {
  return (
    <div className="field">
      <label htmlFor="force-reason">Why overrule the evidence? (kept in the audit log)</label>
      <textarea
        id="force-reason"
        rows={3}
        maxLength={1000}
        value={value}
        aria-invalid={missing || undefined}
        aria-describedby={missing ? "force-reason-error" : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {missing ? (
        <p id="force-reason-error" className="field__error">
          ✕ A forced promotion needs a reason.
        </p>
      ) : null}
    </div>
  );
}
