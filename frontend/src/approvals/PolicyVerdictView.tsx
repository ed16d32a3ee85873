import "./approvals.css";
import type { PolicyEffect, PolicyVerdict } from "./types";

const EFFECT: Record<PolicyEffect, { label: string; symbol: string; tone: string }> = {
  allow: { label: "Allowed", symbol: "✓", tone: "success" },
  require_review: { label: "Needs review", symbol: "‖", tone: "warning" },
  deny: { label: "Denied", symbol: "✕", tone: "danger" },
  confirm: { label: "Ask the agent's user", symbol: "?", tone: "warning" },
};

/** A policy effect as words, with a symbol that repeats them (never colour alone). */
export function EffectBadge({ effect }: { effect: string }) {
  const known = EFFECT[effect as PolicyEffect];
  return (
    <span className={`status status--${known?.tone ?? "neutral"}`} data-effect={effect}>
      <span className="status__symbol" aria-hidden="true">
        {known?.symbol ?? "•"}
      </span>
      {known?.label ?? effect}
    </span>
  );
}

export const effectLabel = (effect: string) => EFFECT[effect as PolicyEffect]?.label ?? effect;

const SCOPE_TEXT: Record<string, string> = {
  workspace: "workspace rule",
  workflow: "workflow rule",
  user: "user rule",
  "user+workflow": "user and workflow rule",
};

/** Which rule decided, and why: "rule 'x' (workspace rule, order 10): reason", or the workspace default. */
export function VerdictRuleText({ verdict }: { verdict: PolicyVerdict }) {
  const rule = verdict.rule;
  if (verdict.default || !rule || rule.id === null) {
    return <>{rule?.reason || `No rule matched: the workspace default for ${verdict.risk ?? "this"} tools.`}</>;
  }
  return (
    <>
      Rule <strong>{rule.name}</strong>{" "}
      <span className="muted">
        ({SCOPE_TEXT[rule.scope] ?? rule.scope}
        {rule.order !== undefined ? `, order ${rule.order}` : ""})
      </span>
      {rule.reason ? <>: {rule.reason}</> : null}
      {rule.error ? <span className="field-error"> — failed and taken as “needs review”: {rule.error}</span> : null}
    </>
  );
}

/**
 * The policy's verdict on a call: its effect, the deciding rule and reason, and (with `explain`) the rules that
 * matched too but lost, each with why.
 */
export function PolicyVerdictView({
  verdict,
  explain = false,
  headingLevel = 3,
  title = "Policy",
}: {
  verdict: PolicyVerdict;
  explain?: boolean;
  headingLevel?: 2 | 3 | 4;
  title?: string;
}) {
  const Heading = `h${headingLevel}` as "h2" | "h3" | "h4";
  return (
    <div className={`verdict verdict--${verdict.effect}`} data-testid="policy-verdict">
      <Heading className="suggestion__label">{title}</Heading>
      <p className="verdict__line">
        <EffectBadge effect={verdict.effect} /> <VerdictRuleText verdict={verdict} />
      </p>
      {explain ? (
        verdict.matched.length > 0 ? (
          <>
            <p className="muted">Rules that matched too, but lost:</p>
            <ul className="verdict__losers">
              {verdict.matched.map((m, i) => (
                <li key={m.id ?? i}>
                  <strong>{m.name}</strong> <EffectBadge effect={m.effect} />{" "}
                  <span className="muted">({SCOPE_TEXT[m.scope] ?? m.scope}
                    {m.order !== undefined ? `, order ${m.order}` : ""})</span>{" "}
                  — lost because: {m.lost_because}
                  {m.error ? <span className="field-error"> (failed: {m.error})</span> : null}
                </li>
              ))}
            </ul>
          </>
        ) : (
          <p className="muted">No other rule matched.</p>
        )
      ) : null}
    </div>
  );
}
