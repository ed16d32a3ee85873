"""Users and workspaces: made, found, signed in; roles (docs/auth.md). Members and invitations are members.py,
bearer tokens tokens.py."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from core.errors import Conflict, Forbidden, NotFound, Unauthorized, ValidationFailed
from services.models.users import Membership, User, Workspace
from services.offload import off_loop

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


def workspace_row(session: Session, slug: str, name: str | None = None) -> Workspace:
    """A new workspace's own row, its slug checked (flushed: it has its id). services.workspaces.create makes a
    whole workspace: this row and the rows of the other packages it needs."""
    if not re.match(r"^[a-z0-9][a-z0-9\-]{0,62}$", slug or ""):
        raise ValidationFailed("invalid workspace slug", details={"slug": ["lowercase letters, digits and -"]})
    if session.scalar(select(Workspace).where(Workspace.slug == slug)):
        raise Conflict(f"workspace {slug!r} already exists")
    ws = Workspace(slug=slug, name=name or slug)
    session.add(ws)
    session.flush()
    return ws


def find_workspace(session: Session, id_or_slug: str) -> Workspace | None:
    return session.get(Workspace, id_or_slug) or session.scalar(select(Workspace).where(Workspace.slug == id_or_slug))


def hash_password(password: str) -> str:
    """~50 ms of CPU: callers on the server hash before their transaction, off the event loop (off_loop)."""
    return generate_password_hash(password, method=_HASH_METHOD)


def create_user(
    session: Session, email: str, password: str, name: str = "", *, password_hash: str | None = None
) -> User:
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
    m = session.scalar(select(Membership).where(Membership.user_id == user.id, Membership.workspace_id == workspace.id))
    if m is None:
        m = Membership(user_id=user.id, workspace_id=workspace.id, role=role, disabled=False)
        session.add(m)
        if user.default_workspace_id is None:  # the first workspace a user joins is where they land
            user.default_workspace_id = workspace.id
    m.role = role
    session.flush()
    return m


def authenticate(db, email: str, password: str) -> str:
    """The id of the user with these credentials, or Unauthorized (the same answer for an unknown email, which
    is checked against a dummy hash so that it takes as long). Call it outside any transaction: the hash takes
    ~50 ms of CPU and runs off the event loop (services.offload), where no lock may be held meanwhile."""
    with db.read() as session:
        row = session.execute(
            select(User.id, User.password_hash, User.disabled).where(User.email == (email or "").strip().lower())
        ).first()
    ok = off_loop(check_password_hash, row.password_hash if row else _DUMMY_HASH, password or "")
    if row is None or not ok or row.disabled:
        raise Unauthorized("wrong email or password", code="invalid_credentials")
    return row.id


def memberships(session: Session, user: User, token_created_at=None) -> list[tuple[Workspace, str]]:
    """The workspaces the user may act in, oldest first, with their role: not those where an admin disabled
    them, nor (for a bearer token made at `token_created_at`) those where an admin revoked their tokens since."""
    rows = session.execute(
        select(Workspace, Membership)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .where(Membership.user_id == user.id, Membership.disabled.is_(False))
        .order_by(Workspace.created_at, Workspace.slug)
    )
    return [
        (ws, m.role)
        for ws, m in rows
        if token_created_at is None or m.tokens_not_before is None or token_created_at > m.tokens_not_before
    ]


def pick_workspace(
    session: Session, user: User, asked: str | None, remembered: str | None = None, token_created_at=None
) -> tuple[Workspace, str] | None:
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
            disabled = _disabled_in(session, user, wanted)
            if disabled is not None:  # a member an admin disabled there: say so (they know the workspace)
                raise Forbidden(
                    f"an admin disabled your access to {disabled.name}: ask an admin of it to enable you again",
                    code="member_disabled",
                    details={"workspace": {"id": disabled.id, "slug": disabled.slug, "name": disabled.name}},
                )
            raise NotFound(f"workspace {wanted} not found")
    return choices[0] if choices else None


def _disabled_in(session: Session, user: User, wanted: str) -> Workspace | None:
    """The workspace `wanted` (id or slug) when the user is a member an admin disabled there, else None."""
    return session.scalar(
        select(Workspace)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .where(
            Membership.user_id == user.id,
            Membership.disabled.is_(True),
            (Workspace.id == wanted) | (Workspace.slug == wanted),
        )
    )


def role_in(session: Session, user: User, workspace_id: str) -> str | None:
    return session.scalar(
        select(Membership.role).where(Membership.user_id == user.id, Membership.workspace_id == workspace_id)
    )


def emails_of(session: Session, workspace_id: str, user_ids: set[str]) -> dict[str, str]:
    """The emails of these users who are (or were) members of the workspace, by id: one query."""
    if not user_ids:
        return {}
    rows = session.execute(
        select(User.id, User.email)
        .join(Membership, Membership.user_id == User.id)
        .where(User.id.in_(user_ids), Membership.workspace_id == workspace_id)
    )
    return {row.id: row.email for row in rows}


def user_view(user: User) -> dict[str, Any]:
    return {"id": user.id, "email": user.email, "name": user.name}


def bootstrap_admin(session: Session, email: str, password: str, workspace: Workspace) -> User | None:
    """The first admin, from COACH_ADMIN_EMAIL / COACH_ADMIN_PASSWORD, when no user exists yet."""
    if not email or not password or (session.scalar(select(func.count()).select_from(User)) or 0) > 0:
        return None
    user = create_user(session, email, password, "Admin")
    set_role(session, user, workspace, "admin")
    return user
