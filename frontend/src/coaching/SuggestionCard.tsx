import { memo } from "react";
import { Link } from "react-router-dom";
import { PolicyVerdictView } from "../approvals/PolicyVerdictView";
import { Countdown } from "../control/Countdown";
import { ParamsDiff } from "./ParamsDiff";
import { confidenceLabel, correctionPackId, formatAge, formatValue } from "../format";
import { isToolCall, type Suggestion } from "./types";
import { suggestionRegionText } from "../regions/labels";

function SourceText({ source, stepId }: { source: string; stepId: string }) {
  const pack = correctionPackId(source);
  if (pack) {
    return (
      <>
        Learned rule from{" "}
        <Link to={`/correction-packs?pack=${encodeURIComponent(pack)}`}>the correction pack of step {stepId}</Link>
      </>
    );
  }
  if (source === "definition") return <>The workflow definition</>;
  if (source === "llm") return <>The language model</>;
  return <>{source}</>;
}

const PURPOSE_NOTE: Record<string, string> = {
  correction: "You rejected this step. Correct it (c), do it by hand (m) or skip it (s).",
  spot_check: "Spot check of an AUTO run: Coach runs this workflow unattended and asks now and then.",
};

/** The step Coach proposes to run next, and why. */
export const SuggestionCard = memo(function SuggestionCard({ suggestion }: { suggestion: Suggestion }) {
  const note = suggestion.purpose ? PURPOSE_NOTE[suggestion.purpose] : undefined;
  const learned = suggestion.definition_params !== undefined && correctionPackId(suggestion.source) !== null;
  const call = isToolCall(suggestion);
  return (
    <section
      className="card suggestion"
      aria-labelledby="suggestion-heading"
      data-suggestion-id={suggestion.suggestion_id}
      data-kind={suggestion.kind ?? "step"}
    >
      <h2 id="suggestion-heading" className="suggestion__title" tabIndex={-1}>
        {call ? (
          <>
            Tool call: <span className="mono">{suggestion.tool}</span> (agent step {suggestion.step_name || suggestion.step_id})
          </>
        ) : (
          <>Suggestion: {suggestion.step_name || suggestion.step_id}</>
        )}
      </h2>
      {call ? (
        <p className="muted">
          The agent asks to make this call. Accept runs it, correct runs it with your arguments, manual gives the agent
          your result, skip tells it the call was skipped, reject sends it your feedback and asks it not to repeat the
          call.
        </p>
      ) : null}
      <Countdown deadline={suggestion.deadline} onTimeout={suggestion.on_timeout} what="This suggestion" />
      {note ? (
        <p className="notice notice--warning suggestion__purpose">
          <strong>{suggestion.purpose === "correction" ? "Rejected — " : "Spot check — "}</strong>
          {note}
        </p>
      ) : null}
      <dl className="facts">
        <div>
          <dt>{call ? "Agent step" : "Step"}</dt>
          <dd className="mono">{suggestion.step_id}</dd>
        </div>
        {call && suggestion.tool_call_id ? (
          <div>
            <dt>Call id</dt>
            <dd className="mono">{suggestion.tool_call_id}</dd>
          </div>
        ) : null}
        <div>
          <dt>Tool</dt>
          <dd>
            <span className="mono">{suggestion.tool ?? "(none)"}</span>
            {suggestion.risk ? <span className="tag">risk: {suggestion.risk}</span> : null}
          </dd>
        </div>
        {suggestion.region ? (
          <div>
            <dt>Region</dt>
            <dd data-region-id={suggestion.region.id}>{suggestionRegionText(suggestion.region)}</dd>
          </div>
        ) : null}
        <div>
          <dt>Confidence</dt>
          <dd>{confidenceLabel(suggestion.confidence)}</dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>
            <SourceText source={suggestion.source} stepId={suggestion.step_id} />
          </dd>
        </div>
        <div>
          <dt>Suggested</dt>
          <dd>
            <time dateTime={suggestion.created_at}>{formatAge(suggestion.created_at)}</time>
          </dd>
        </div>
      </dl>
      {suggestion.rationale ? (
        <>
          <h3 className="suggestion__label">{call ? "The agent's reasoning" : "Rationale"}</h3>
          <p className="suggestion__rationale">{suggestion.rationale}</p>
        </>
      ) : null}
      <h3 className="suggestion__label" id="suggestion-params-heading">
        {call ? "Arguments" : "Params"}
      </h3>
      <pre className="code" aria-labelledby="suggestion-params-heading" data-testid="suggested-params">
        {formatValue(suggestion.params)}
      </pre>
      {suggestion.policy ? (
        <>
          <PolicyVerdictView verdict={suggestion.policy} />
          {suggestion.policy.effect === "deny" ? (
            <p className="verdict__warning" data-testid="policy-deny-note">
              ✕ This call would be denied: accepting or correcting it is refused by the server. Reject it, do it by
              hand (m) or skip it (s).
            </p>
          ) : suggestion.policy.effect === "require_review" ? (
            <p className="muted">‖ The policy asks a person to review this call: your decision is that review.</p>
          ) : null}
        </>
      ) : null}
      {learned ? (
        <ParamsDiff
          title="What the correction pack changed"
          before={suggestion.definition_params}
          after={suggestion.params}
          emptyText={
            call
              ? "The learned rule left the arguments as the agent wrote them."
              : "The learned rule left the params as the definition renders them."
          }
        />
      ) : null}
    </section>
  );
});
