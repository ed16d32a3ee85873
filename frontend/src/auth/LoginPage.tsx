import { useRef, useState, type FormEvent } from "react";
import { ApiError, errorMessage } from "../api/client";
import { useDocumentTitle } from "../hooks";
import { useAuth } from "./useAuth";

/** What to tell the user when a login attempt fails. */
export function loginErrorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return "Wrong email or password";
    if (error.status === 429) {
      return error.retryAfter !== undefined
        ? `Too many attempts, try again in ${error.retryAfter} s`
        : "Too many attempts, try again later";
    }
  }
  return errorMessage(error);
}

/**
 * Shown instead of every page while logged out. The address stays the one
 * the user asked for, so after logging in that page opens.
 */
export default function LoginPage() {
  useDocumentTitle("Log in");
  const { login } = useAuth();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const emailRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);

  const wrongCredentials = error instanceof ApiError && error.status === 401;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    if (!email.trim()) {
      emailRef.current?.focus();
      return;
    }
    if (!password) {
      passwordRef.current?.focus();
      return;
    }
    setPending(true);
    setError(null);
    try {
      await login(email.trim(), password);
      // Logged in: this page goes away and the wanted page renders.
    } catch (err) {
      setError(err);
      setPending(false);
      // The submit button was disabled while waiting; put the user back in the form.
      passwordRef.current?.focus();
      passwordRef.current?.select();
    }
  }

  return (
    <>
      <header className="site-header">
        <div className="site-header__inner">
          <span className="brand">Coach</span>
        </div>
      </header>
      <main id="main" className="content content--narrow">
        <section className="login" aria-labelledby="login-heading">
          <h1 id="login-heading">Log in to Coach</h1>
          <form className="form" onSubmit={onSubmit}>
            <div className="field">
              <label htmlFor="login-email">Email</label>
              <input
                ref={emailRef}
                id="login-email"
                name="email"
                type="email"
                autoComplete="username"
                autoFocus
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                aria-invalid={wrongCredentials || undefined}
                aria-describedby={error ? "login-error" : undefined}
              />
            </div>
            <div className="field">
              <label htmlFor="login-password">Password</label>
              <input
                ref={passwordRef}
                id="login-password"
                name="password"
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-invalid={wrongCredentials || undefined}
                aria-describedby={error ? "login-error" : undefined}
              />
            </div>
            {/* Always in the page, so the message is announced when it appears. */}
            <div id="login-error" role="alert" className={error ? "notice notice--error" : undefined}>
              {error ? (
                <p>
                  <span className="notice__icon" aria-hidden="true">
                    ✕{" "}
                  </span>
                  {loginErrorMessage(error)}
                </p>
              ) : null}
            </div>
            <button type="submit" className="button" disabled={pending} aria-busy={pending || undefined}>
              {pending ? "Logging in…" : "Log in"}
            </button>
          </form>
        </section>
      </main>
    </>
  );
}
