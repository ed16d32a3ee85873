"""A workspace's Slack settings (admins; bot token and signing secret sealed at rest, never returned) and each
member's Slack user id (their own setting), stored and audited (docs/slack.md)."""

from __future__ import annotations

import functools
import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from config import Settings
from core.errors import Conflict, NotFound, ValidationFailed
from services.audit import service as audit
from services.models.slack import SlackUser, WorkspaceSlack
from services.models.users import Membership, User, Workspace
from services.orm import utcnow
from services.slack.client import SlackConfig
from services.toolservers.secrets import Secrets, SecretUnreadable

CHANNEL = re.compile(r"^[CGD][A-Z0-9]{2,30}$")  # a channel id (C…, G… private, D… direct), not a #name
SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,30}$")
SECRET_MAX = 500


@functools.lru_cache(maxsize=4)
def _secrets(secret_key: str) -> Secrets:
    return Secrets(secret_key, purpose=b"coach slack app secrets")


def secrets(settings: Settings) -> Secrets:
    return _secrets(settings.secret_key)


def _public(row: WorkspaceSlack | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "bot_token_set": bool(row.bot_token),
        "signing_secret_set": bool(row.signing_secret),
        "default_channel": row.default_channel or None,
    }


def view(session: Session, workspace_id: str) -> dict[str, Any]:
    row = session.get(WorkspaceSlack, workspace_id)
    body: dict[str, Any] = {
        "bot_token_set": False,
        "signing_secret_set": False,
        "default_channel": None,
        "updated_by": None,
        "updated_at": None,
        "interactivity_path": f"/api/integrations/slack/{workspace_id}/interactions",
    }
    if row is not None:
        body.update(_public(row) or {}, updated_by=row.updated_by or None, updated_at=row.updated_at)
    return body


def _secret_field(body: dict[str, Any], name: str, errors: dict[str, list[str]]) -> str | None:
    """A new secret: a string (stored), '' (removed), or None (keep the stored one)."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > SECRET_MAX or any(c.isspace() for c in value.strip()):
        errors[name] = [f"must be a string of at most {SECRET_MAX} characters without spaces"]
        return None
    return value.strip()


def save(session: Session, settings: Settings, workspace_id: str, body: dict[str, Any], actor: str) -> dict[str, Any]:
    """Set the workspace's Slack app (422 naming the field), audited `slack_settings_change` without the secrets."""
    errors: dict[str, list[str]] = {}
    token = _secret_field(body, "bot_token", errors)
    if token and not token.startswith("xoxb-"):
        errors["bot_token"] = ["a bot token starts with xoxb- (OAuth & Permissions, Bot User OAuth Token)"]
    signing = _secret_field(body, "signing_secret", errors)
    channel = body.get("default_channel")
    if channel is not None and (not isinstance(channel, str) or (channel and not CHANNEL.match(channel))):
        errors["default_channel"] = ["a channel id such as C0123ABCD (the channel's details show it), or empty"]
    if errors:
        raise ValidationFailed("the Slack settings are not valid", errors)
    if session.get(Workspace, workspace_id) is None:
        raise NotFound(f"workspace {workspace_id} not found")
    row = session.get(WorkspaceSlack, workspace_id)
    before = _public(row)
    if row is None:
        row = WorkspaceSlack(workspace_id=workspace_id, bot_token="", signing_secret="", default_channel="")
        session.add(row)
    box = secrets(settings)
    if token is not None:
        row.bot_token = box.seal({"v": token}) if token else ""
    if signing is not None:
        row.signing_secret = box.seal({"v": signing}) if signing else ""
    if channel is not None:
        row.default_channel = channel
    row.updated_by, row.updated_at = actor, utcnow()
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "slack_settings_change",
        target_type="workspace",
        target_id=workspace_id,
        before=before,
        after=_public(row),
    )
    return view(session, workspace_id)


def remove(session: Session, workspace_id: str, actor: str) -> None:
    row = session.get(WorkspaceSlack, workspace_id)
    if row is not None:
        before = _public(row)
        session.delete(row)
        session.flush()
        audit.record(
            session,
            workspace_id,
            actor,
            "slack_settings_change",
            target_type="workspace",
            target_id=workspace_id,
            before=before,
            after=None,
        )


def config(session: Session, settings: Settings, workspace_id: str) -> SlackConfig | None:
    """The workspace's Slack app with its secrets opened, or None when it has none (or they cannot be opened:
    COACH_SECRET_KEY changed; an admin enters them again)."""
    row = session.get(WorkspaceSlack, workspace_id)
    if row is None:
        return None
    box = secrets(settings)
    try:
        token = box.open(row.bot_token).get("v", "") if row.bot_token else ""
        signing = box.open(row.signing_secret).get("v", "") if row.signing_secret else ""
    except SecretUnreadable:
        return None
    return SlackConfig(
        workspace_id=workspace_id, bot_token=token, signing_secret=signing, default_channel=row.default_channel or ""
    )


# -- each member's Slack user id -----------------------------------------------------------------------------------


def my_id(session: Session, workspace_id: str, user_id: str) -> dict[str, Any]:
    row = session.scalar(select(SlackUser).where(SlackUser.workspace_id == workspace_id, SlackUser.user_id == user_id))
    return {"slack_user_id": row.slack_user_id if row else None}


def set_my_id(
    session: Session, workspace_id: str, user_id: str, slack_user_id: str | None, actor: str
) -> dict[str, Any]:
    """Set (or clear with None / '') the caller's Slack user id in this workspace; 409 when another member has it."""
    value = (slack_user_id or "").strip()
    if value and not SLACK_USER.match(value):
        raise ValidationFailed(
            "not a Slack user id",
            {"slack_user_id": ["a member id such as U0123ABCD (Slack: your profile, ⋮, Copy member ID)"]},
        )
    row = session.scalar(select(SlackUser).where(SlackUser.workspace_id == workspace_id, SlackUser.user_id == user_id))
    if value:
        other = session.scalar(
            select(SlackUser).where(SlackUser.workspace_id == workspace_id, SlackUser.slack_user_id == value)
        )
        if other is not None and other.user_id != user_id:
            raise Conflict("another member of this workspace has this Slack user id", details={"slack_user_id": value})
    before = row.slack_user_id if row else None
    if not value:
        if row is not None:
            session.delete(row)
    elif row is None:
        session.add(SlackUser(workspace_id=workspace_id, user_id=user_id, slack_user_id=value))
    else:
        row.slack_user_id, row.updated_at = value, utcnow()
    session.flush()
    if before != (value or None):
        audit.record(
            session,
            workspace_id,
            actor,
            "slack_user_id_change",
            target_type="user",
            target_id=user_id,
            before={"slack_user_id": before},
            after={"slack_user_id": value or None},
        )
    return {"slack_user_id": value or None}


def member_of(session: Session, workspace_id: str, slack_user_id: str) -> tuple[User, str] | None:
    """The Coach member a Slack user id names in this workspace, and their role; None when nobody set it, or the
    member is disabled here or everywhere."""
    found = session.execute(
        select(User, Membership)
        .join(SlackUser, SlackUser.user_id == User.id)
        .join(Membership, (Membership.user_id == User.id) & (Membership.workspace_id == workspace_id))
        .where(SlackUser.workspace_id == workspace_id, SlackUser.slack_user_id == slack_user_id)
    ).first()
    if found is None:
        return None
    user, membership = found
    if user.disabled or membership.disabled:
        return None
    return user, membership.role


def slack_id_of(session: Session, workspace_id: str, user_id: str) -> str | None:
    """The Slack user id a member set in this workspace (the outbox DMs them there), or None."""
    return my_id(session, workspace_id, user_id)["slack_user_id"]
