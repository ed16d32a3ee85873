import { memo } from "react";
import { Link } from "react-router-dom";
import { EffectBadge, VerdictRuleText } from "../approvals/PolicyVerdictView";
import { ErrorNotice, Loading } from "../components/QueryState";
import { correctionPackId, formatValue } from "../format";
import type { AgentMessage } from "./types";
import { useTranscript } from "./useTranscript";
import "./agent.css";

const USER_KIND: Record<string, string> = {
  goal: "Goal",
  answer: "A person's answer",
  approved: "Approval",
  repair: "Coach asked again",
};

const DECISION_TEXT: Record<string, string> = {
  allow: "ran (allowed by the policy)",
  deny: "not run: denied by the policy",
  invalid: "not run: invalid arguments",
  accept: "accepted by a person",
  correct: "corrected by a person",
  manual: "done by hand",
  skip: "skipped by a person",
  reject: "rejected by a person",
};

const STATUS_TEXT: Record<string, string> = {
  pending: "being checked",
  review: "waiting for a decision",
  ready: "about to run",
  done: "answered",
};

/** An agent step as a conversation: LLM turns, each tool call with its verdict, decision and result. */
export const AgentTranscript = memo(function AgentTranscript({
  executionId,
  stepId,
  stepStatus,
  headingLevel = 3,
  highlight,
}: {
  executionId: string;
  stepId: string;
  stepStatus?: string;
  headingLevel?: 2 | 3 | 4;
  /** The suggestion shown beside it: its call is marked. */
  highlight?: string | null;
}) {
  const transcript = useTranscript(executionId, stepId, stepStatus);
  const Heading = `h${headingLevel}` as "h2" | "h3" | "h4";
  const headingId = `transcript-${stepId}-heading`;
  return (
    <section className="transcript" aria-labelledby={headingId}>
      <Heading id={headingId} className="transcript__title">
        Agent conversation: <span className="mono">{stepId}</span>
      </Heading>
      {transcript.isError ? (
        <ErrorNotice title="Could not load the conversation" error={transcript.error}
                     onRetry={() => void transcript.refetch()} />
      ) : !transcript.data ? (
        <Loading label="Loading the conversation…" />
      ) : transcript.data.messages.length === 0 ? (
        <p className="muted">The agent has not started yet.</p>
      ) : (
        <ol className="transcript__list">
          {transcript.data.messages.map((m) => (
            <MessageItem key={m.seq} message={m} highlight={highlight ?? null} />
          ))}
        </ol>
      )}
    </section>
  );
});

function MessageItem({ message: m, highlight }: { message: AgentMessage; highlight: string | null }) {
  if (m.role === "system") {
    return (
      <li className="transcript__item transcript__item--system">
        <details>
          <summary>System prompt</summary>
          <pre className="transcript__text">{m.content}</pre>
        </details>
      </li>
    );
  }
  if (m.role === "user") {
    return (
      <li className="transcript__item transcript__item--user">
        <p className="transcript__who">{USER_KIND[m.kind ?? ""] ?? "User"}</p>
        <p className="transcript__text">{m.content}</p>
      </li>
    );
  }
  if (m.role === "assistant") {
    return (
      <li className="transcript__item transcript__item--assistant">
        <p className="transcript__who">
          LLM, turn {m.turn}
          {m.marker ? <span className="tag">{m.marker}</span> : null}
          {m.tool_calls && m.tool_calls.length > 0 ? (
            <span className="muted">
              {" "}
              · asks for {m.tool_calls.length} tool {m.tool_calls.length === 1 ? "call" : "calls"}
            </span>
          ) : null}
        </p>
        {m.content ? <p className="transcript__text">{m.content}</p> : null}
        {m.reasoning ? (
          <details>
            <summary>Reasoning</summary>
            <p className="transcript__text">{m.reasoning}</p>
          </details>
        ) : null}
      </li>
    );
  }
  return <ToolItem message={m} highlighted={Boolean(highlight && m.suggestion_id === highlight)} />;
}

function ToolItem({ message: m, highlighted }: { message: AgentMessage; highlighted: boolean }) {
  const pack = m.source ? correctionPackId(m.source) : null;
  const changed = m.params !== undefined && m.params !== null && formatValue(m.params) !== formatValue(m.arguments);
  return (
    <li
      className={`transcript__item transcript__item--tool${m.error ? " transcript__item--error" : ""}${
        highlighted ? " transcript__item--current" : ""
      }`}
      data-tool-call-id={m.tool_call_id ?? undefined}
    >
      <p className="transcript__who">
        Tool call <span className="mono">{m.tool ?? m.name}</span>{" "}
        <span className="muted mono">{m.tool_call_id}</span>
        {m.policy ? <EffectBadge effect={m.policy.effect} /> : null}
        {highlighted ? <span className="tag">shown above</span> : null}
      </p>
      <dl className="facts transcript__facts">
        <div>
          <dt>Arguments</dt>
          <dd>
            <pre className="code">{m.raw_arguments ?? formatValue(m.arguments ?? {})}</pre>
          </dd>
        </div>
        {changed ? (
          <div>
            <dt>Ran with</dt>
            <dd>
              <pre className="code">{formatValue(m.params)}</pre>
              {pack ? (
                <span className="muted">
                  Learned rule from{" "}
                  <Link to={`/correction-packs?pack=${encodeURIComponent(pack)}`}>the correction pack of {m.tool ? `tool ${m.tool}` : "this tool"}</Link>
                </span>
              ) : null}
            </dd>
          </div>
        ) : null}
        {m.policy ? (
          <div>
            <dt>Policy</dt>
            <dd>
              <VerdictRuleText verdict={m.policy} />
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Decision</dt>
          <dd>{m.decision ? DECISION_TEXT[m.decision] ?? m.decision : STATUS_TEXT[m.status ?? ""] ?? m.status}</dd>
        </div>
        {m.status === "done" ? (
          <div>
            <dt>Result</dt>
            <dd>
              <pre className={`code${m.error ? " code--error" : ""}`}>{m.content}</pre>
              {m.trimmed ? (
                <span className="tag" title="Sent to the LLM shortened, to fit the step's context budget">
                  trimmed to fit the context budget
                </span>
              ) : null}
            </dd>
          </div>
        ) : null}
      </dl>
    </li>
  );
}
