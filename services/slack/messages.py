"""Block Kit messages for a review waiting in Coach: pure builders, no I/O (docs/slack.md).

A review is an approval (an approval step, a policy-forced review of a tool call, a call held by the MCP gateway)
or a coaching suggestion (a step's call, or an agent's tool call). Its message says what is asked, the tool and its
params (cut short), the workflow or agent, and links to the item in the web app. Its buttons carry the item's
kind and id in `value` (`{"kind": "approval"|"suggestion", "id": ..., "execution_id": ...}`); the interactivity
endpoint (services/decisions/slack.py) reads them back and checks them against the workspace the request was
signed for.

A risky review gets only an "Open in Coach" button, never Approve: a call whose tool is `destructive`, or that a
policy rule of the workspace flagged (its verdict names a rule and is not `allow`: a threshold someone wrote for
exactly such calls). This is the web panel's confirming-key rule (frontend/src/coaching/confirmation.ts) without
`external`: a person must look at it in Coach.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

APPROVE, REJECT, OPEN = "coach_approve", "coach_reject", "coach_open"
KINDS = ("approval", "suggestion")
# what the message announces: the events of issue 33 that a button can answer
EVENTS = {
    "approval_requested": "Approval requested",
    "tool_call_held": "Tool call held for review",
    "suggestion_waiting": "Suggestion waiting",
}
PARAMS_MAX = 1500  # characters of the params shown (Slack's section text holds 3000)
TEXT_MAX = 600


@dataclass(frozen=True)
class Review:
    """What a message shows of one review. `url`: the item in the web app (see `link`)."""

    kind: str  # approval | suggestion
    id: str
    workspace_id: str
    event: str = "approval_requested"
    question: str = ""
    tool: str | None = None
    params: Any = None
    risk: str | None = None
    policy: dict[str, Any] | None = None
    workflow: str | None = None
    agent: str | None = None
    step_id: str | None = None
    execution_id: str | None = None
    url: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def link(app_url: str, kind: str, execution_id: str | None) -> str:
    """The item in the web app: a suggestion's coaching panel, an approval's execution, else the queue."""
    base = app_url.rstrip("/")
    if kind == "suggestion" and execution_id:
        return f"{base}/executions/{execution_id}/coach"
    if execution_id:
        return f"{base}/executions/{execution_id}"
    return f"{base}/queue"


def from_approval(
    approval: dict[str, Any], workspace_id: str, app_url: str, *, workflow: str | None = None, risk: str | None = None
) -> Review:
    """A Review from an approval as services.approvals.service.view gives it (the `approval_requested` event)."""
    held = approval.get("kind") in ("tool_call", "gateway")
    policy = approval.get("policy") or None
    return Review(
        kind="approval",
        id=approval["approval_id"],
        workspace_id=workspace_id,
        event="tool_call_held" if held else "approval_requested",
        question=approval.get("message") or "",
        tool=approval.get("tool"),
        params=approval.get("params"),
        risk=risk or (policy or {}).get("risk"),
        policy=policy,
        workflow=workflow,
        agent=approval.get("agent"),
        step_id=approval.get("step_id"),
        execution_id=approval.get("execution_id"),
        url=link(app_url, "approval", approval.get("execution_id")),
    )


def from_suggestion(
    suggestion: dict[str, Any], workspace_id: str, app_url: str, *, workflow: str | None = None
) -> Review:
    """A Review from a suggestion as services.coaching.service.described gives it (the coaching_suggestion event)."""
    return Review(
        kind="suggestion",
        id=suggestion["suggestion_id"],
        workspace_id=workspace_id,
        event="tool_call_held" if suggestion.get("kind") == "tool_call" else "suggestion_waiting",
        question=suggestion.get("rationale") or "",
        tool=suggestion.get("tool"),
        params=suggestion.get("params"),
        risk=suggestion.get("risk"),
        policy=suggestion.get("policy"),
        workflow=workflow,
        step_id=suggestion.get("step_id"),
        execution_id=suggestion.get("execution_id"),
        url=link(app_url, "suggestion", suggestion.get("execution_id")),
    )


def risk_reason(review: Review) -> str | None:
    """Why the review must be opened in Coach rather than approved from Slack, or None when one click may do."""
    risk = review.risk or (review.policy or {}).get("risk")
    if risk == "destructive":
        return "destructive"
    policy = review.policy or {}
    rule = policy.get("rule") or {}
    if policy and policy.get("effect", "allow") != "allow" and not policy.get("default") and rule.get("name"):
        return f'flagged by the policy "{rule["name"]}"'
    return None


def button_value(review: Review) -> str:
    """What a button carries back: the item's kind and id (and its execution), checked by the endpoint."""
    return json.dumps(
        {"kind": review.kind, "id": review.id, "execution_id": review.execution_id}, separators=(",", ":")
    )


def parse_value(value: str) -> dict[str, Any] | None:
    """A button's value as `button_value` wrote it, or None when it is not one."""
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") not in KINDS or not isinstance(data.get("id"), str):
        return None
    return data


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _escape(text: str) -> str:
    """Slack's mrkdwn needs &, < and > escaped (a param could otherwise forge a link or a mention)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def params_text(params: Any) -> str:
    """The params as indented JSON, escaped for mrkdwn, then cut to PARAMS_MAX (escaping first: `<` takes 4)."""
    try:
        shown = json.dumps(params, indent=1, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = str(params)
    return _cut(_escape(shown[: PARAMS_MAX * 2]).replace("`" * 3, "'" * 3), PARAMS_MAX)


def review_title(review: Review) -> str:
    """The message's one line (its fallback text, unescaped): what is asked."""
    what = review.question or review.tool or review.step_id or review.id
    return f"{EVENTS.get(review.event, 'Review waiting')}: {what}"


def review_message(review: Review, progress: str | None = None) -> dict[str, Any]:
    """{text, blocks} for chat.postMessage: the review, and Approve / Reject (or Open in Coach alone when risky).
    `progress`: a line on how far a quorum has come ("Approved so far: 1 of 2 (…)")."""
    title = EVENTS.get(review.event, "Review waiting")
    where = " · ".join(
        p
        for p in (
            f"Workflow: {review.workflow}" if review.workflow else "",
            f"Agent: {review.agent}" if review.agent else "",
            f"Step: {review.step_id}" if review.step_id else "",
        )
        if p
    )
    text = _escape(review_title(review))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(title, 150)}},
    ]
    if review.question:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _escape(_cut(review.question, TEXT_MAX))}})
    if review.tool:
        body = f"*Tool:* `{_escape(review.tool)}`"
        if review.params not in (None, {}):
            body += f"\n```{params_text(review.params)}```"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": body}})
    if where:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _escape(_cut(where, TEXT_MAX))}]})
    if progress:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _escape(_cut(progress, TEXT_MAX))}]})
    reason = risk_reason(review)
    value = button_value(review)
    open_button = {
        "type": "button",
        "action_id": OPEN,
        "text": {"type": "plain_text", "text": "Open in Coach"},
        "url": review.url,
        "value": value,
    }
    if reason:
        blocks.append(
            {
                "type": "context",
                "elements": [{"type": "mrkdwn", "text": _escape(f"Risky ({reason}): decide it in Coach.")}],
            }
        )
        actions = [dict(open_button, style="primary")]
    else:
        actions = [
            {
                "type": "button",
                "action_id": APPROVE,
                "style": "primary",
                "value": value,
                "text": {"type": "plain_text", "text": "Approve"},
            },
            {
                "type": "button",
                "action_id": REJECT,
                "style": "danger",
                "value": value,
                "text": {"type": "plain_text", "text": "Reject"},
            },
            open_button,
        ]
    blocks.append({"type": "actions", "block_id": f"coach_review:{review.kind}:{review.id}"[:255], "elements": actions})
    return {"text": _cut(text, 3000), "blocks": blocks}


def decided_message(
    review_text: str, outcome: str, who: str | None, comment: str | None = None, at: datetime | None = None
) -> dict[str, Any]:
    """The message once the review is decided (anywhere): what it was and "Approved by X at <when>", no buttons left.
    `who` None: decided by Coach itself (a deadline); `at` is shown in each reader's own time zone (Slack's date
    formatting, with the UTC time as its fallback)."""
    verb = {
        "approve": "Approved",
        "approved": "Approved",
        "accept": "Approved",
        "reject": "Rejected",
        "rejected": "Rejected",
        "expired": "Expired",
    }.get(outcome, outcome.capitalize())
    by = f" by {who}" if who else ""
    when = ""
    if at is not None:
        fallback = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        when = f" <!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"
    line = f"*{verb}*{_escape(by)}{when}" + (f": {_escape(_cut(comment, TEXT_MAX))}" if comment else "")
    return {
        "text": _escape(f"{verb}{by}: {review_text}")[:3000],
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": _escape(_cut(review_text, TEXT_MAX))}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": line}]},
        ],
    }


def reject_modal(value: str, title: str) -> dict[str, Any]:
    """The view views.open shows on Reject: a comment, then the view_submission decides (private_metadata: value)."""
    return {
        "type": "modal",
        "callback_id": "coach_reject_comment",
        "private_metadata": value,
        "title": {"type": "plain_text", "text": "Reject"},
        "submit": {"type": "plain_text", "text": "Reject"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": _escape(_cut(title, TEXT_MAX))}},
            {
                "type": "input",
                "block_id": "comment",
                "optional": True,
                "label": {"type": "plain_text", "text": "Why (sent with the rejection)"},
                "element": {"type": "plain_text_input", "action_id": "comment", "multiline": True, "max_length": 3000},
            },
        ],
    }
