import { useState } from "react";
import { useNavigate } from "react-router-dom";
import { errorMessage } from "../api/client";
import { useAuth } from "./useAuth";

/** Ends the session; says why when the server could not be told. */
export function LogoutButton() {
  const { logout } = useAuth();
  const navigate = useNavigate();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function onClick() {
    setPending(true);
    setError(null);
    try {
      await logout();
      // The next login starts from the home page, not from this user's last page.
      navigate("/", { replace: true });
    } catch (err) {
      setError(err);
      setPending(false);
    }
  }

  return (
    <>
      <button
        type="button"
        className="button button--on-dark"
        onClick={() => void onClick()}
        disabled={pending}
        aria-busy={pending || undefined}
      >
        {pending ? "Logging out…" : "Log out"}
      </button>
      {error ? (
        <p className="account__error" role="alert">
          <span aria-hidden="true">✕ </span>
          Could not log out: {errorMessage(error)}
        </p>
      ) : null}
    </>
  );
}
