import { useMutation } from "@tanstack/react-query";
import { api, unwrap } from "../api/typed";
import { plural } from "../format";
import { SectionError } from "./SectionError";

/** "Verify chain": replays the workspace's hash chain on the server and says what it found. */
export function VerifyChain() {
  const verify = useMutation({
    mutationFn: () => unwrap(api.GET("/api/audit/verify")),
  });
  const result = verify.data;
  return (
    <div className="verify">
      <button
        type="button"
        className="button button--secondary"
        // aria-disabled, not disabled: a disabled button drops the keyboard focus.
        onClick={() => !verify.isPending && verify.mutate()}
        aria-disabled={verify.isPending || undefined}
        aria-busy={verify.isPending || undefined}
      >
        {verify.isPending ? "Verifying…" : "Verify chain"}
      </button>
      <p className="verify__result" role="status">
        {result?.ok ? (
          <span className="status status--success">
            <span aria-hidden="true">✓</span> Chain intact: {plural(result.checked, "event")} checked, none edited or
            missing.
          </span>
        ) : null}
      </p>
      {result && !result.ok ? (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">
            <span aria-hidden="true">✕ </span>Chain broken at event {result.first_bad_seq ?? "?"}
          </p>
          <p>
            {result.reason ?? "The chain does not verify."} {plural(result.checked, "event")} before it{" "}
            {result.checked === 1 ? "is" : "are"} intact.
          </p>
        </div>
      ) : null}
      {verify.isError ? (
        <SectionError title="Could not verify the chain" what="Audit checks" error={verify.error} />
      ) : null}
    </div>
  );
}
