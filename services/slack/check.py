"""Whether a workspace's Slack app works: a test against Slack (auth.test with the stored bot token, as the LLM
provider's Test does), the last delivery to Slack and its error, and whether Slack can reach the interactivity
URL this server gives (docs/slack.md)."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from config import Settings
from core import notifications as N
from services.models.notifications import OutboxRow
from services.models.slack import WorkspaceSlack
from services.slack import client, service

# what a person does about Slack's answer to auth.test
FIXES = {
    "invalid_auth": "Slack does not know this bot token: copy the Bot User OAuth Token (OAuth & Permissions) "
    "again and save it",
    "not_authed": "no bot token was sent: save the Bot User OAuth Token",
    "account_inactive": "the token belongs to a deleted user or an uninstalled app: reinstall the app",
    "token_revoked": "the bot token was revoked: reinstall the app and save its new token",
    "token_expired": "the bot token expired: reinstall the app and save its new token",
    "not_configured": "no bot token is stored: save the Bot User OAuth Token first",
}


def test(db, settings: Settings, workspace_id: str) -> dict[str, Any]:
    """auth.test with the workspace's stored bot token: {ok, team, bot_user} or {ok: false, error, failure} in words.
    Nothing is posted; no transaction is open while Slack answers."""
    with db.read() as session:
        row = session.get(WorkspaceSlack, workspace_id)
        stored = row is not None and bool(row.bot_token)
        config = service.config(session, settings, workspace_id) if stored else None
    if not stored:
        return {"ok": False, "code": "not_configured", "failure": FIXES["not_configured"]}
    if config is None:
        return {
            "ok": False,
            "code": "secret_unreadable",
            "failure": "the stored bot token cannot be decrypted (was COACH_SECRET_KEY changed?): enter it again",
        }
    try:
        answer = client.auth_test(settings, config)
    except client.SlackError as exc:
        if exc.code == "network_error":
            failure = f"Slack could not be reached: {exc}"
        else:
            failure = FIXES.get(exc.code) or f"Slack answered {exc.code}"
        return {"ok": False, "code": exc.code, "failure": failure}
    return {
        "ok": True,
        "team": answer.get("team") or None,
        "bot_user": answer.get("user") or None,
        "bot_user_id": answer.get("user_id") or None,
    }


def last_delivery(session: Session, workspace_id: str) -> dict[str, Any] | None:
    """The newest message to Slack that was tried: {status, error, at, attempts}; None when none was."""
    row = session.scalars(
        select(OutboxRow)
        .where(OutboxRow.workspace_id == workspace_id, OutboxRow.channel == N.SLACK, OutboxRow.attempts > 0)
        .order_by(OutboxRow.created_at.desc(), OutboxRow.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return {
        "status": row.status,
        "error": row.last_error or None,
        "attempts": row.attempts,
        "at": row.sent_at or row.created_at,
    }


def unreachable_reason(settings: Settings) -> str | None:
    """Why Slack cannot call this server's interactivity URL (a loopback or private address, or a plain name such
    as localhost), or None when it may."""
    host = urlsplit(settings.resolved_public_url).hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if host == "localhost" or host.endswith(".localhost") or "." not in host:
            return (
                f"{host} is a name only this network knows: Slack cannot reach it. Set COACH_PUBLIC_URL to the "
                "address people and Slack reach this server at"
            )
        return None
    if address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified:
        return (
            f"{host} is a loopback or private address: Slack cannot reach it. Set COACH_PUBLIC_URL to the "
            "address people and Slack reach this server at (a tunnel while you try it out)"
        )
    return None


def interactivity(settings: Settings, workspace_id: str) -> dict[str, Any]:
    """The full interactivity URL to give Slack, and why Slack cannot reach it (None when it can)."""
    path = f"/api/integrations/slack/{workspace_id}/interactions"
    return {
        "interactivity_url": settings.resolved_public_url + path,
        "interactivity_unreachable": unreachable_reason(settings),
    }
