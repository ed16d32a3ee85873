"""The outbox's Slack channel (services/slack is the app itself: settings, messages, the Web API client, clicks).

A review that can be decided (an approval requested, a call held, its deadline near, its escalation) goes to the
workspace's Slack app when it has one: to its default channel when one is set, else as a direct message to each
recipient who gave Coach their Slack member ID. The message's Approve / Reject buttons come back to
/api/integrations/slack/<workspace_id>/interactions (services/slack/interactions.py), which decides as the member
who clicked."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import notifications as N
from services.notifications.email import SendFailed
from services.notifications.models import OutboxRow
from services.slack import client, messages, service as slack_settings
from services.slack.models import SlackUser, WorkspaceSlack

CHANNEL_RECIPIENT = "channel"  # the recipient of the one row of a review posted to the default channel


def enabled(session: Session, workspace_id: str) -> bool:
    """The workspace has a Slack app with a bot token."""
    row = session.get(WorkspaceSlack, workspace_id)
    return row is not None and bool(row.bot_token)


def rows(session: Session, base: dict[str, Any], kind: str, chosen: list[str]) -> list[OutboxRow]:
    """The Slack rows of a decidable review: one for the default channel, else one DM per recipient with a Slack
    member ID in this workspace."""
    if kind not in N.DECIDABLE:
        return []
    app = session.get(WorkspaceSlack, base["workspace_id"])
    if app is None or not app.bot_token:
        return []
    if app.default_channel:
        return [OutboxRow(**base, channel=N.SLACK, recipient=CHANNEL_RECIPIENT, address=app.default_channel)]
    if not chosen:
        return []
    ids = dict(session.execute(select(SlackUser.user_id, SlackUser.slack_user_id).where(
        SlackUser.workspace_id == base["workspace_id"], SlackUser.user_id.in_(chosen))).all())
    return [OutboxRow(**base, channel=N.SLACK, recipient=user_id, address=ids[user_id])
            for user_id in dict.fromkeys(chosen) if ids.get(user_id)]


def prepare(session: Session, settings, row: OutboxRow) -> tuple[client.SlackConfig, str, dict]:
    """What to post, read in the sender's transaction: the app (its token opened), where, and the message."""
    config = slack_settings.config(session, settings, row.workspace_id)
    if config is None or not config.bot_token:
        raise SendFailed("the workspace's Slack app is gone or its token cannot be opened")
    p = row.payload
    approval = {"approval_id": p.get("approval_id"), "kind": p.get("approval_kind"), "message": p.get("text"),
                "tool": p.get("tool"), "params": p.get("params"), "policy": p.get("policy"), "agent": p.get("agent"),
                "step_id": p.get("step_id"), "execution_id": p.get("execution_id")}
    review = messages.from_approval(approval, row.workspace_id, settings.resolved_public_url)
    return config, row.address, messages.review_message(review)


def send(settings, prepared: tuple[client.SlackConfig, str, dict]) -> None:
    config, target, message = prepared
    try:
        client.post_review(settings, config, target, message)
    except client.SlackError as exc:
        raise SendFailed(str(exc)) from exc
