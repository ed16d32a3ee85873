"""Bearer tokens: made (shown once, stored hashed), looked up, revoked; and what a socket connection may still do
(docs/auth.md)."""

from __future__ import annotations

import secrets

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from core.errors import NotFound, ValidationFailed
from services.db import Database
from services.models.users import ApiToken, Membership, User
from services.orm import utcnow
from services.users.service import TOKEN_PREFIX, token_hash


def create_token(session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    """The token itself is returned once and never stored."""
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValidationFailed("a token needs a name", details={"name": ["is required, at most 200 characters"]})
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=name.strip(), token_hash=token_hash(secret))
    session.add(token)
    session.flush()
    return token, secret


# built once: SQLAlchemy reuses its compiled form
_TOKEN_ACTIVE = (
    select(ApiToken.id).where(ApiToken.token_hash == bindparam("hashed"), ApiToken.revoked_at.is_(None)).limit(1)
)


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


# built once: the token and its user in one statement (every request with a bearer token reads it)
_TOKEN_AND_USER = (
    select(ApiToken, User)
    .join(User, User.id == ApiToken.user_id)
    .where(ApiToken.token_hash == bindparam("hashed"), ApiToken.revoked_at.is_(None))
    .limit(1)
)


def token_and_user(session: Session, secret: str) -> tuple[ApiToken, User] | None:
    """The active token whose secret this is and its user, or None (unknown, revoked, or the user disabled)."""
    found = session.execute(_TOKEN_AND_USER, {"hashed": token_hash(secret or "")}).first()
    if found is None:
        return None
    token, user = found
    return None if user.disabled else (token, user)


# one statement per socket event: the connection's user may still act in its workspace, with which role now.
# A cookie connection: the session version it was accepted with is still the user's (no logout since). A token
# connection: the token is not revoked, and was made after any revocation of the member's tokens there.
_STILL_MEMBER = (
    select(Membership.role)
    .join(User, User.id == Membership.user_id)
    .where(
        Membership.user_id == bindparam("user_id"),
        Membership.workspace_id == bindparam("ws"),
        Membership.disabled.is_(False),
        User.disabled.is_(False),
        User.session_version == bindparam("sv"),
    )
    .limit(1)
)
_STILL_MEMBER_BY_TOKEN = (
    select(Membership.role)
    .join(User, User.id == Membership.user_id)
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(
        Membership.user_id == bindparam("user_id"),
        Membership.workspace_id == bindparam("ws"),
        Membership.disabled.is_(False),
        User.disabled.is_(False),
        ApiToken.token_hash == bindparam("hashed"),
        ApiToken.revoked_at.is_(None),
        (Membership.tokens_not_before.is_(None)) | (ApiToken.created_at > Membership.tokens_not_before),
    )
    .limit(1)
)


def connection_role(
    db: Database, user_id: str, workspace_id: str, *, session_version: int | None = None, hashed: str | None = None
) -> str | None:
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
