"""What an admin may do to the members of their own workspace (never to another's), and invitations: sent,
accepted, declined, cancelled (docs/auth.md)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import Conflict, NotFound, ValidationFailed
from services.db import row_locks
from services.models.users import Invitation, Membership, User, Workspace
from services.orm import in_workspace, utcnow
from services.users.service import ROLES, check_email, create_user, role_in, set_role


def membership(session: Session, workspace_id: str, user_id: str) -> Membership:
    m = session.scalar(select(Membership).where(Membership.user_id == user_id, Membership.workspace_id == workspace_id))
    if m is None:
        raise NotFound(f"user {user_id} not found")
    return m


def _keep_an_admin(session: Session, workspace_id: str, leaving: Membership) -> None:
    """409 when `leaving` is the workspace's last active admin (demoted, disabled or removed)."""
    if leaving.role != "admin" or leaving.disabled:
        return
    query = select(Membership.id).where(
        Membership.workspace_id == workspace_id, Membership.role == "admin", Membership.disabled.is_(False)
    )
    # PostgreSQL: lock the admins' rows (in one order: no deadlock), so that two admins demoting each other at
    # once cannot both pass; the second re-reads the rows after the first commits and sees one admin left
    query = query.order_by(Membership.id)
    admins = session.scalars(query.with_for_update() if row_locks(session) else query).all()
    if len(admins) <= 1:
        raise Conflict(
            "this is the workspace's last admin: make another member admin first",
            details={"role": ["the last admin cannot be demoted, disabled or removed"]},
        )


def change_role(session: Session, workspace_id: str, user_id: str, role: str) -> tuple[Membership, str]:
    """An admin's role change; (membership, role before)."""
    if role not in ROLES:
        raise ValidationFailed("unknown role", details={"role": [f"must be one of {list(ROLES)}"]})
    m = membership(session, workspace_id, user_id)
    before = m.role
    if role != "admin":
        _keep_an_admin(session, workspace_id, m)
    m.role = role
    session.flush()
    return m, before


def remove_member(session: Session, workspace_id: str, user_id: str) -> Membership:
    m = membership(session, workspace_id, user_id)
    _keep_an_admin(session, workspace_id, m)
    user = session.get(User, user_id)
    if user is not None and user.default_workspace_id == workspace_id:
        user.default_workspace_id = None  # back to their oldest remaining membership: all of them their own
    session.delete(m)
    session.flush()
    return m


def set_member_disabled(session: Session, workspace_id: str, user_id: str, disabled: bool) -> Membership:
    m = membership(session, workspace_id, user_id)
    if disabled:
        _keep_an_admin(session, workspace_id, m)
    m.disabled = disabled
    session.flush()
    return m


def revoke_member_tokens(session: Session, workspace_id: str, user_id: str) -> Membership:
    """The member's bearer tokens made until now stop acting in this workspace (their other workspaces, where
    this admin has no say, keep them); tokens the member makes later work again."""
    m = membership(session, workspace_id, user_id)
    m.tokens_not_before = utcnow()
    session.flush()
    return m


def invite(
    session: Session,
    workspace: Workspace,
    email: str,
    role: str,
    invited_by: str,
    *,
    password: str | None = None,
    name: str = "",
    password_hash: str | None = None,
) -> Invitation | None:
    """An admin's invitation of `email` to `role` in `workspace`. The caller answers the same whatever this finds
    (an account or not, a member already or not), so that nobody learns which emails exist. A password creates
    the account when there is none (the invited person logs in with it, then accepts); an existing account's
    password is never touched. None when the email is already a member (nothing to invite)."""
    email = check_email(email)
    if role not in ROLES:
        raise ValidationFailed("unknown role", details={"role": [f"must be one of {list(ROLES)}"]})
    if password is not None and (not isinstance(password, str) or len(password) < 8):
        raise ValidationFailed("invalid user", details={"password": ["must be at least 8 characters"]})
    user = session.scalar(select(User).where(User.email == email))
    if user is None and password:
        user = create_user(session, email, password, name, password_hash=password_hash)
    if user is not None and role_in(session, user, workspace.id) is not None:
        return None
    found = session.scalar(
        select(Invitation).where(
            Invitation.workspace_id == workspace.id, Invitation.email == email, Invitation.status == "pending"
        )
    )
    if found is None:
        found = Invitation(workspace_id=workspace.id, email=email, role=role, invited_by=invited_by, status="pending")
        session.add(found)
    found.role, found.invited_by = role, invited_by
    session.flush()
    return found


def invitations_for(session: Session, user: User) -> list[tuple[Invitation, Workspace]]:
    rows = session.execute(
        select(Invitation, Workspace)
        .join(Workspace, Workspace.id == Invitation.workspace_id)
        .where(Invitation.email == user.email, Invitation.status == "pending")
        .order_by(Invitation.created_at)
    )
    return [(inv, ws) for inv, ws in rows]


def workspace_invitations(session: Session, workspace_id: str) -> list[Invitation]:
    return list(
        session.scalars(
            select(Invitation)
            .where(Invitation.workspace_id == workspace_id, Invitation.status == "pending")
            .order_by(Invitation.created_at)
        )
    )


def _my_invitation(session: Session, user: User, invitation_id: str) -> Invitation:
    inv = session.get(Invitation, invitation_id)
    if inv is None or inv.email != user.email:  # someone else's: the same answer as none at all
        raise NotFound(f"invitation {invitation_id} not found")
    if inv.status != "pending":
        raise Conflict(f"the invitation was already {inv.status}", details={"status": [inv.status]})
    return inv


def accept_invitation(session: Session, user: User, invitation_id: str) -> tuple[Invitation, Membership]:
    """The invited user's own act. Their default workspace stays where it was (unless they had none)."""
    inv = _my_invitation(session, user, invitation_id)
    workspace = session.get(Workspace, inv.workspace_id)
    if workspace is None:  # (the invitation's foreign key keeps it)
        raise LookupError(f"workspace {inv.workspace_id} does not exist")
    existing = role_in(session, user, workspace.id)
    m = membership(session, workspace.id, user.id) if existing else set_role(session, user, workspace, inv.role)
    inv.status, inv.decided_at = "accepted", utcnow()
    session.flush()
    return inv, m


def decline_invitation(session: Session, user: User, invitation_id: str) -> Invitation:
    inv = _my_invitation(session, user, invitation_id)
    inv.status, inv.decided_at = "declined", utcnow()
    session.flush()
    return inv


def cancel_invitation(session: Session, workspace_id: str, invitation_id: str) -> Invitation:
    inv = in_workspace(session, Invitation, workspace_id, invitation_id, "invitation")
    if inv.status != "pending":
        raise Conflict(f"the invitation was already {inv.status}", details={"status": [inv.status]})
    inv.status, inv.decided_at = "cancelled", utcnow()
    session.flush()
    return inv


def invitation_view(inv: Invitation, workspace: Workspace | None = None) -> dict[str, Any]:
    view = {
        "id": inv.id,
        "email": inv.email,
        "role": inv.role,
        "invited_by": inv.invited_by,
        "status": inv.status,
        "created_at": inv.created_at,
    }
    if workspace is not None:
        view["workspace"] = {"id": workspace.id, "slug": workspace.slug, "name": workspace.name}
    return view
