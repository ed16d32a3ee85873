"""Users, workspaces, memberships and bearer tokens (docs/auth.md)."""
from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from core.errors import Conflict, NotFound, Unauthorized, ValidationFailed
from services.db import Database, row_locks
from services.offload import off_loop
from services.orm import utcnow
from services.policies.models import PolicySettings
from services.users.models import ApiToken, Invitation, Membership, User, Workspace

ROLES = ("operator", "lead", "admin")
INVITATION_STATUSES = ("pending", "accepted", "declined", "cancelled")
RANK = {role: i for i, role in enumerate(ROLES)}
TOKEN_PREFIX = "coach_"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
# werkzeug's scrypt: a current, memory-hard algorithm; the hash string names it, so old hashes keep working
_HASH_METHOD = "scrypt"
# checked when an email is unknown, so that a wrong email costs as long as a wrong password
_DUMMY_HASH = generate_password_hash("not a password", method=_HASH_METHOD)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_workspace(session: Session, slug: str, name: str | None = None) -> Workspace:
    if not re.match(r"^[a-z0-9][a-z0-9\-]{0,62}$", slug or ""):
        raise ValidationFailed("invalid workspace slug", details={"slug": ["lowercase letters, digits and -"]})
    if session.scalar(select(Workspace).where(Workspace.slug == slug)):
        raise Conflict(f"workspace {slug!r} already exists")
    ws = Workspace(slug=slug, name=name or slug)
    session.add(ws)
    session.flush()
    session.add(PolicySettings(workspace_id=ws.id))  # revision 0, no defaults: read by every judged call
    return ws


def find_workspace(session: Session, id_or_slug: str) -> Workspace | None:
    return session.get(Workspace, id_or_slug) or session.scalar(select(Workspace).where(Workspace.slug == id_or_slug))


def hash_password(password: str) -> str:
    """~50 ms of CPU: callers on the server hash before their transaction, off the event loop (off_loop)."""
    return generate_password_hash(password, method=_HASH_METHOD)


def create_user(session: Session, email: str, password: str, name: str = "", *,
                password_hash: str | None = None) -> User:
    """`password_hash`: the password already hashed by `hash_password` (then it is not hashed again here)."""
    email = (email or "").strip().lower()
    problems = {}
    if not _EMAIL.match(email):
        problems["email"] = ["must be an email address"]
    if not isinstance(password, str) or len(password) < 8:
        problems["password"] = ["must be at least 8 characters"]
    if problems:
        raise ValidationFailed("invalid user", details=problems)
    if session.scalar(select(User).where(User.email == email)):
        raise Conflict(f"user {email} already exists")
    user = User(email=email, name=name or email.split("@")[0], password_hash=password_hash or hash_password(password))
    session.add(user)
    session.flush()
    return user


def check_email(email: str) -> str:
    email = (email or "").strip().lower()
    if not _EMAIL.match(email) or len(email) > 254:
        raise ValidationFailed("invalid email", details={"email": ["must be an email address"]})
    return email


def set_role(session: Session, user: User, workspace: Workspace, role: str) -> Membership:
    """Give `user` `role` in `workspace`. Only for the user's own acts (accepting an invitation), an admin's role
    change of an existing member, or the operator of the server (CLI, bootstrap): never to pull someone in."""
    if role not in ROLES:
        raise ValidationFailed("unknown role", details={"role": [f"must be one of {list(ROLES)}"]})
    m = session.scalar(select(Membership).where(Membership.user_id == user.id,
                                                Membership.workspace_id == workspace.id))
    if m is None:
        m = Membership(user_id=user.id, workspace_id=workspace.id, role=role, disabled=False)
        session.add(m)
        if user.default_workspace_id is None:  # the first workspace a user joins is where they land
            user.default_workspace_id = workspace.id
    m.role = role
    session.flush()
    return m


# ---- members: what an admin may do to a member of their own workspace (never to other workspaces) -------------

def membership(session: Session, workspace_id: str, user_id: str) -> Membership:
    m = session.scalar(select(Membership).where(Membership.user_id == user_id,
                                                Membership.workspace_id == workspace_id))
    if m is None:
        raise NotFound(f"user {user_id} not found")
    return m


def _keep_an_admin(session: Session, workspace_id: str, leaving: Membership) -> None:
    """409 when `leaving` is the workspace's last active admin (demoted, disabled or removed)."""
    if leaving.role != "admin" or leaving.disabled:
        return
    query = select(Membership.id).where(Membership.workspace_id == workspace_id, Membership.role == "admin",
                                        Membership.disabled.is_(False))
    # PostgreSQL: lock the admins' rows (in one order: no deadlock), so that two admins demoting each other at
    # once cannot both pass; the second re-reads the rows after the first commits and sees one admin left
    query = query.order_by(Membership.id)
    admins = session.scalars(query.with_for_update() if row_locks(session) else query).all()
    if len(admins) <= 1:
        raise Conflict("this is the workspace's last admin: make another member admin first",
                       details={"role": ["the last admin cannot be demoted, disabled or removed"]})


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


# ---- invitations --------------------------------------------------------------------------------------------

def invite(session: Session, workspace: Workspace, email: str, role: str, invited_by: str, *,
           password: str | None = None, name: str = "", password_hash: str | None = None) -> Invitation | None:
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
    found = session.scalar(select(Invitation).where(Invitation.workspace_id == workspace.id,
                                                    Invitation.email == email, Invitation.status == "pending"))
    if found is None:
        found = Invitation(workspace_id=workspace.id, email=email, role=role, invited_by=invited_by,
                           status="pending")
        session.add(found)
    found.role, found.invited_by = role, invited_by
    session.flush()
    return found


def invitations_for(session: Session, user: User) -> list[tuple[Invitation, Workspace]]:
    rows = session.execute(select(Invitation, Workspace).join(Workspace, Workspace.id == Invitation.workspace_id)
                           .where(Invitation.email == user.email, Invitation.status == "pending")
                           .order_by(Invitation.created_at))
    return [(inv, ws) for inv, ws in rows]


def workspace_invitations(session: Session, workspace_id: str) -> list[Invitation]:
    return list(session.scalars(select(Invitation).where(Invitation.workspace_id == workspace_id,
                                                         Invitation.status == "pending")
                                .order_by(Invitation.created_at)))


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
    inv = session.get(Invitation, invitation_id)
    if inv is None or inv.workspace_id != workspace_id:
        raise NotFound(f"invitation {invitation_id} not found")
    if inv.status != "pending":
        raise Conflict(f"the invitation was already {inv.status}", details={"status": [inv.status]})
    inv.status, inv.decided_at = "cancelled", utcnow()
    session.flush()
    return inv


def invitation_view(inv: Invitation, workspace: Workspace | None = None) -> dict[str, Any]:
    view = {"id": inv.id, "email": inv.email, "role": inv.role, "invited_by": inv.invited_by,
            "status": inv.status, "created_at": inv.created_at}
    if workspace is not None:
        view["workspace"] = {"id": workspace.id, "slug": workspace.slug, "name": workspace.name}
    return view


def authenticate(db, email: str, password: str) -> str:
    """The id of the user with these credentials, or Unauthorized (the same answer for an unknown email, which
    is checked against a dummy hash so that it takes as long). Call it outside any transaction: the hash takes
    ~50 ms of CPU and runs off the event loop (services.offload), where no lock may be held meanwhile."""
    with db.read() as session:
        row = session.execute(select(User.id, User.password_hash, User.disabled)
                              .where(User.email == (email or "").strip().lower())).first()
    ok = off_loop(check_password_hash, row.password_hash if row else _DUMMY_HASH, password or "")
    if row is None or not ok or row.disabled:
        raise Unauthorized("wrong email or password", code="invalid_credentials")
    return row.id


def memberships(session: Session, user: User, token_created_at=None) -> list[tuple[Workspace, str]]:
    """The workspaces the user may act in, oldest first, with their role: not those where an admin disabled
    them, nor (for a bearer token made at `token_created_at`) those where an admin revoked their tokens since."""
    rows = session.execute(select(Workspace, Membership).join(Membership, Membership.workspace_id == Workspace.id)
                           .where(Membership.user_id == user.id, Membership.disabled.is_(False))
                           .order_by(Workspace.created_at, Workspace.slug))
    return [(ws, m.role) for ws, m in rows
            if token_created_at is None or m.tokens_not_before is None or token_created_at > m.tokens_not_before]


def pick_workspace(session: Session, user: User, asked: str | None, remembered: str | None = None,
                   token_created_at=None) -> tuple[Workspace, str] | None:
    """The workspace a caller acts in: the one asked for (NotFound when not a member), else the remembered one
    (chosen at login) while still a member, else the user's default workspace (the one they were created in or
    last chose themselves; nobody else can change it), else their oldest. None when they belong to none."""
    choices = memberships(session, user, token_created_at)
    for wanted, strict in ((asked, True), (remembered, False), (user.default_workspace_id, False)):
        if not wanted:
            continue
        for ws, role in choices:
            if wanted in (ws.id, ws.slug):
                return ws, role
        if strict:
            raise NotFound(f"workspace {wanted} not found")
    return choices[0] if choices else None


def role_in(session: Session, user: User, workspace_id: str) -> str | None:
    return session.scalar(select(Membership.role).where(Membership.user_id == user.id,
                                                        Membership.workspace_id == workspace_id))


def create_token(session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    """The token itself is returned once and never stored."""
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValidationFailed("a token needs a name", details={"name": ["is required, at most 200 characters"]})
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=name.strip(), token_hash=token_hash(secret))
    session.add(token)
    session.flush()
    return token, secret


def active_token(session: Session, hashed: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == hashed, ApiToken.revoked_at.is_(None)))


# built once: SQLAlchemy reuses its compiled form
_TOKEN_ACTIVE = (select(ApiToken.id).where(ApiToken.token_hash == bindparam("hashed"), ApiToken.revoked_at.is_(None))
                 .limit(1))


def token_active(db: Database, hashed: str) -> bool:
    """Whether a token is still valid, checked at every socket event (a connection outlives a request: a token
    revoked meanwhile must stop it): one statement on a pooled connection, without an ORM session."""
    return _read_one(db, _TOKEN_ACTIVE, {"hashed": hashed}) is not None


def _read_one(db: Database, statement, values: dict):
    """The first row of a read of its own, on a Core connection of the read-only engine (never SQLite's write
    lock): checks that run on every socket event, where a Session's setup would cost more than the SELECT."""
    with db.read_engine.connect() as conn:
        return conn.execute(statement, values).first()


def user_for_token(session: Session, secret: str) -> User | None:
    found = token_and_user(session, secret)
    return found[1] if found else None


def token_and_user(session: Session, secret: str) -> tuple[ApiToken, User] | None:
    token = active_token(session, token_hash(secret or ""))
    if token is None:
        return None
    user = session.get(User, token.user_id)
    return None if user is None or user.disabled else (token, user)


# one statement per socket event: the connection's user may still act in its workspace, with which role now.
# A cookie connection: the session version it was accepted with is still the user's (no logout since). A token
# connection: the token is not revoked, and was made after any revocation of the member's tokens there.
_STILL_MEMBER = (select(Membership.role).join(User, User.id == Membership.user_id)
                 .where(Membership.user_id == bindparam("user_id"), Membership.workspace_id == bindparam("ws"),
                        Membership.disabled.is_(False), User.disabled.is_(False),
                        User.session_version == bindparam("sv")).limit(1))
_STILL_MEMBER_BY_TOKEN = (
    select(Membership.role).join(User, User.id == Membership.user_id)
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(Membership.user_id == bindparam("user_id"), Membership.workspace_id == bindparam("ws"),
           Membership.disabled.is_(False), User.disabled.is_(False), ApiToken.token_hash == bindparam("hashed"),
           ApiToken.revoked_at.is_(None),
           (Membership.tokens_not_before.is_(None)) | (ApiToken.created_at > Membership.tokens_not_before))
    .limit(1))


def connection_role(db: Database, user_id: str, workspace_id: str, *, session_version: int | None = None,
                    hashed: str | None = None) -> str | None:
    """The role a socket connection acts with now, or None when it may no longer act (revoked token, logout,
    removed or disabled member): checked at every socket event, one statement."""
    if hashed:
        found = _read_one(db, _STILL_MEMBER_BY_TOKEN, {"user_id": user_id, "ws": workspace_id, "hashed": hashed})
    else:
        found = _read_one(db, _STILL_MEMBER, {"user_id": user_id, "ws": workspace_id, "sv": session_version or 0})
    return found[0] if found else None


def list_tokens(session: Session, user: User) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.created_at)))


def end_sessions(session: Session, user: User) -> int:
    """Logout: every session cookie issued to the user until now stops working (a copy of one included)."""
    user.session_version = (user.session_version or 0) + 1
    session.flush()
    return user.session_version


def revoke_token(session: Session, user: User, token_id: str) -> ApiToken:
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound(f"token {token_id} not found")
    token.revoked_at = token.revoked_at or utcnow()
    return token


def user_view(user: User) -> dict[str, Any]:
    return {"id": user.id, "email": user.email, "name": user.name}


def bootstrap_admin(session: Session, email: str, password: str, workspace: Workspace) -> User | None:
    """The first admin, from COACH_ADMIN_EMAIL / COACH_ADMIN_PASSWORD, when no user exists yet."""
    if not email or not password or (session.scalar(select(func.count()).select_from(User)) or 0) > 0:
        return None
    user = create_user(session, email, password, "Admin")
    set_role(session, user, workspace, "admin")
    return user
