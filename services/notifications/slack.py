"""The outbox's Slack channel (services/slack is the app itself: settings, messages, the Web API client, clicks).

A review that can be decided (an approval requested, a call held, its deadline near, its escalation) goes to the
workspace's Slack app when it has one: to the Slack channels of the routes that matched it (a route's
`slack_channel`), else to the app's default channel when one is set, else as a direct message to each recipient who
gave Coach their Slack member ID. The message's Approve / Reject buttons come back to
/api/integrations/slack/<workspace_id>/interactions (services/decisions/slack.py), which decides as the member
who clicked. Where each message went (chat.postMessage's channel id and ts) is kept on its row: once the review is
decided anywhere, services/notifications/slack_updates.py replaces it with who decided, without buttons.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import approvals as A
from core import notifications as N
from services.models.approvals import Approval
from services.models.notifications import OutboxRow
from services.models.slack import SlackUser, WorkspaceSlack
from services.notifications.email import SendFailed
from services.slack import client, messages
from services.slack import service as slack_settings

CHANNEL_RECIPIENT = "channel"  # the recipient of the one row of a review posted to the default channel


@dataclass(frozen=True)
class Prepared:
    """One call to make after commit: chat.postMessage of `message` to `target`, or (`ts` set) chat.update of the
    message `ts` in channel `target`. `message` None: nothing to send (the row is done)."""

    config: client.SlackConfig | None
    target: str
    message: dict[str, Any] | None
    ts: str | None = None
    row: str | None = None  # the review row posted (its id goes with the message: client.post_review)
    look_first: bool = False  # an earlier attempt may have posted it: look for that message before posting


def enabled(session: Session, workspace_id: str) -> bool:
    """The workspace has a Slack app with a bot token."""
    row = session.get(WorkspaceSlack, workspace_id)
    return row is not None and bool(row.bot_token)


def channel_recipient(channel: str) -> str:
    """A route channel's recipient: unique per (event, channel), within the column's 64 characters."""
    name = f"channel:{channel}"
    return name if len(name) <= 64 else "channel:" + hashlib.sha256(channel.encode("utf-8")).hexdigest()[:40]


def rows(
    session: Session, base: dict[str, Any], kind: str, chosen: list[str], channels: list[str] | None = None
) -> list[OutboxRow]:
    """The Slack rows of a decidable review: one per route channel (`channels`), else one for the default channel,
    else one DM per recipient with a Slack member ID in this workspace."""
    if kind not in N.DECIDABLE:
        return []
    app = session.get(WorkspaceSlack, base["workspace_id"])
    if app is None or not app.bot_token:
        return []
    if channels:
        return [
            OutboxRow(**base, channel=N.SLACK, recipient=channel_recipient(c), address=c)
            for c in dict.fromkeys(channels)
        ]
    if app.default_channel:
        return [OutboxRow(**base, channel=N.SLACK, recipient=CHANNEL_RECIPIENT, address=app.default_channel)]
    if not chosen:
        return []
    ids = dict(
        session.execute(
            select(SlackUser.user_id, SlackUser.slack_user_id).where(
                SlackUser.workspace_id == base["workspace_id"], SlackUser.user_id.in_(chosen)
            )
        ).all()
    )
    return [
        OutboxRow(**base, channel=N.SLACK, recipient=user_id, address=ids[user_id])
        for user_id in dict.fromkeys(chosen)
        if ids.get(user_id)
    ]


def app_config(session: Session, settings, workspace_id: str) -> client.SlackConfig:
    config = slack_settings.config(session, settings, workspace_id)
    if config is None or not config.bot_token:
        raise SendFailed("the workspace's Slack app is gone or its token cannot be opened")
    return config


def current_message(session: Session, settings, review_row: OutboxRow) -> dict[str, Any]:
    """The message of a review row as things are now: with Approve / Reject while its approval is pending, else who
    decided what and when, without buttons."""
    p = review_row.payload or {}
    approval = {
        "approval_id": p.get("approval_id"),
        "kind": p.get("approval_kind"),
        "message": p.get("text"),
        "tool": p.get("tool"),
        "params": p.get("params"),
        "policy": p.get("policy"),
        "agent": p.get("agent"),
        "step_id": p.get("step_id"),
        "execution_id": p.get("execution_id"),
    }
    review = messages.from_approval(approval, review_row.workspace_id, settings.resolved_public_url)
    a = session.get(Approval, review_row.approval_id or p.get("approval_id") or "")
    if a is None:
        return messages.review_message(review)
    if a.status == A.PENDING:  # a quorum under way: who approved so far (the buttons stay for the others)
        counted = sorted(A.approvals_counted(a.decisions or []))
        return messages.review_message(
            review, f"Approved so far: {len(counted)} of {a.quorum} ({', '.join(counted)})" if counted else None
        )
    last = (a.decisions or [{}])[-1]
    who = last.get("user")
    return messages.decided_message(
        messages.review_title(review), a.status, None if who == A.SYSTEM else who, last.get("comment"), a.decided_at
    )


def prepare(session: Session, settings, row: OutboxRow) -> Prepared:
    """What to post, read in the sender's transaction: the app (its token opened), where, and the message (already
    the decided one when the review was decided before its message went out)."""
    return Prepared(
        app_config(session, settings, row.workspace_id),
        row.address,
        current_message(session, settings, row),
        row=row.id,
        look_first=(row.attempts or 0) > 1,
    )


def send(settings, prepared: Prepared) -> client.Posted | None:
    """Make the call; the message posted (its channel id and ts), or None for an update or nothing to send."""
    if prepared.message is None or prepared.config is None:
        return None
    try:
        if prepared.ts:
            client.update_decided(settings, prepared.config, prepared.target, prepared.ts, prepared.message)
            return None
        return client.post_review(
            settings,
            prepared.config,
            prepared.target,
            prepared.message,
            row=prepared.row,
            look_first=prepared.look_first,
        )
    except client.SlackError as exc:
        raise SendFailed(str(exc)) from exc
