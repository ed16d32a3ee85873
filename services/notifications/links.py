"""Approve / reject links in an email: signed (HMAC with a key derived from COACH_SECRET_KEY), single-use (the link
row records its use), expiring, bound to the person they were sent to. Opening one shows a confirmation page (a GET
never decides: mail scanners fetch links); its POST decides as that person (services/decisions/links.py). A
risky review (a destructive tool, or an amount above COACH_NOTIFY_LINK_AMOUNT_MAX) is not decided from a link: its
email opens the web app instead."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from config import Settings
from core import notifications as N
from services.models.approvals import Approval
from services.models.notifications import ActionLink, OutboxRow


def key(settings: Settings) -> bytes:
    return hashlib.sha256(b"coach action links\0" + settings.secret_key.encode("utf-8")).digest()


def risk_reason(services, a: Approval) -> str | None:
    """Why this review opens the web app instead of deciding from a link, or None."""
    tool = services.tools.for_workspace(a.workspace_id).get(a.tool) if a.tool else None
    limit = services.settings.notify_link_amount_max or None
    return N.link_decides(getattr(tool, "risk", None), a.policy, a.params, limit)


def app_url(settings: Settings, a: Approval) -> str:
    return f"{settings.resolved_public_url}/queue?approval={a.id}"


def lines_for(session: Session, services, row: OutboxRow, now: datetime) -> list[str]:
    """The links part of a review's email to `row.recipient`: Approve / Reject, or Open in Coach."""
    payload, settings = row.payload or {}, services.settings
    approval_id = payload.get("approval_id")
    a = session.get(Approval, approval_id) if approval_id else None
    if a is None or row.kind not in N.DECIDABLE:
        execution_id = payload.get("execution_id")
        if not execution_id:
            return []
        page = "coach" if row.kind == N.SUGGESTION_WAITING else ""
        return [
            "",
            f"Open in Coach: {settings.resolved_public_url}/executions/{execution_id}" + (f"/{page}" if page else ""),
        ]
    why = risk_reason(services, a)
    if why is not None:
        return ["", f"Decide it in Coach ({why}): {app_url(settings, a)}"]
    link = session.scalar(select(ActionLink).where(ActionLink.outbox_id == row.id))
    if link is None:
        expires = now + timedelta(seconds=settings.notify_link_ttl_s)
        link = ActionLink(
            workspace_id=a.workspace_id,
            approval_id=a.id,
            user_id=row.recipient,
            outbox_id=row.id,
            expires_at=expires,
            created_at=now,
        )
        session.add(link)
    base = f"{settings.resolved_public_url}/act/"
    return [
        "",
        f"Approve: {base}{N.seal_link(key(settings), link.id, 'approve')}",
        f"Reject: {base}{N.seal_link(key(settings), link.id, 'reject')}",
        f"Or decide in Coach: {app_url(settings, a)}",
        f"These links work once, for you only, until {link.expires_at:%Y-%m-%d %H:%M} UTC.",
    ]


@dataclass
class Opened:
    link: ActionLink | None
    decision: str | None
    approval: Approval | None
    refusal: str | None  # why it does not decide; None: it may
    open_app: str | None = None  # a risky review: the web app's address


def open_token(session: Session, services, token: str, now: datetime) -> Opened:
    found = N.open_link(key(services.settings), token)
    if found is None:
        return Opened(None, None, None, "This link is not valid.")
    link = session.get(ActionLink, found[0])
    if link is None:
        return Opened(None, None, None, "This link is not valid.")
    a = session.get(Approval, link.approval_id)
    if a is None:
        return Opened(link, found[1], None, "This approval no longer exists.")
    refusal = N.link_refusal(link.used_at, link.expires_at, now, a.status)
    if refusal is None and risk_reason(services, a) is not None:
        return Opened(link, found[1], a, None, open_app=app_url(services.settings, a))
    return Opened(link, found[1], a, refusal)
