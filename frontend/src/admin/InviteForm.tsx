import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { errorMessage } from "../api/client";
import { serverFieldErrors } from "../policies/fieldErrors";
import { ROLES, invite, isRole, type Role } from "./api";

/** Email, role, and optionally a name and a first password (for someone without an account yet). */
export function InviteForm({ onInvited }: { onInvited: (text: string) => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("operator");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const send = useMutation({
    mutationFn: () => invite({ email: email.trim(), role, name: name.trim(), ...(password ? { password } : {}) }),
    onSuccess: (answer) => {
      setEmail("");
      setName("");
      setPassword("");
      onInvited(`Invited ${answer.email} as ${answer.role}: they accept it when they next sign in.`);
    },
  });
  const problems = serverFieldErrors(send.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!send.isPending) send.mutate();
  };
  const fieldError = (field: string) =>
    problems[field] ? (
      <small id={`invite-${field}-error`} className="field-error" role="alert">
        {problems[field]}
      </small>
    ) : null;
  return (
    <form className="form admin__invite" onSubmit={submit} aria-label="Invite someone" noValidate>
      <div className="field">
        <label htmlFor="invite-email">Email</label>
        <input
          id="invite-email"
          type="email"
          required
          autoComplete="off"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          aria-invalid={problems.email ? true : undefined}
          aria-describedby={problems.email ? "invite-email-error" : undefined}
        />
        {fieldError("email")}
      </div>
      <div className="field">
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(e) => isRole(e.target.value) && setRole(e.target.value)}>
          <RoleOptions />
        </select>
      </div>
      <div className="field">
        <label htmlFor="invite-name">Name (optional)</label>
        <input id="invite-name" type="text" value={name} onChange={(e) => setName(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="invite-password">First password (optional)</label>
        <input
          id="invite-password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          aria-describedby="invite-password-hint"
          aria-invalid={problems.password ? true : undefined}
        />
        <small id="invite-password-hint" className="muted">
          Creates the account when the email has none (at least 8 characters); never changes an existing one.
        </small>
        {fieldError("password")}
      </div>
      {send.isError && Object.keys(problems).length === 0 ? (
        <p className="notice notice--error" role="alert">
          Not sent: {errorMessage(send.error)}
        </p>
      ) : null}
      <button type="submit" className="button" disabled={send.isPending} aria-busy={send.isPending || undefined}>
        {send.isPending ? "Inviting…" : "Send invitation"}
      </button>
    </form>
  );
}

/** The workspace roles as a select's options (inviting someone, changing a member's role). */
export function RoleOptions() {
  return (
    <>
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </>
  );
}
