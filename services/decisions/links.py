"""A decision taken with an email's approve / reject link (the link itself, made and opened:
services/notifications/links.py): the link is used once, then the decision goes through
services.decisions.approvals.submit, the same function the REST route calls (audited and counted like any decision)."""

from __future__ import annotations

from sqlalchemy import select, update

from core import approvals as A
from services.decisions import approvals as approval_decisions
from services.models.notifications import ActionLink
from services.models.users import Membership, User
from services.notifications.links import open_token
from services.orm import utcnow


class Refused(Exception):
    """The link does not decide (the message says why, for the page)."""


def use(services, token: str, comment: str | None) -> dict:
    """Decide with the link, once: the link is marked used in its own transaction first (a second POST, however
    close, finds it used), then the decision goes through services.decisions.approvals.submit as the link's person."""
    now = utcnow()
    with services.command() as uow:
        session = uow.session
        opened = open_token(session, services, token, now)
        link = opened.link
        if opened.refusal or opened.open_app or link is None:  # (no refusal: the link was found)
            raise Refused(opened.refusal or "This review is decided in Coach, not from a link.")
        claimed = session.execute(
            update(ActionLink)
            .where(ActionLink.id == link.id, ActionLink.used_at.is_(None))
            .values(used_at=now, used_decision=opened.decision)
        ).rowcount
        if claimed != 1:
            raise Refused("This link was already used.")
        user = session.get(User, link.user_id)
        member = session.scalar(
            select(Membership).where(Membership.user_id == link.user_id, Membership.workspace_id == link.workspace_id)
        )
        if user is None or user.disabled or member is None or member.disabled:
            raise Refused("You are no longer a member of this workspace.")
        actor = A.Actor(user_id=user.id, email=user.email, role=member.role)
        workspace_id, approval_id, decision = link.workspace_id, link.approval_id, opened.decision
    body = {"decision": decision, "comment": comment or None}
    return approval_decisions.submit(services, workspace_id, approval_id, body, actor, idempotency_key=None)
