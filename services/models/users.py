"""Workspaces, users, memberships, invitations and bearer tokens (docs/auth.md)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, UtcDateTime, new_id, utcnow


class Workspace(FilledAtInit, Base):
    __tablename__ = "workspaces"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class User(FilledAtInit, Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str] = mapped_column(String(255))
    disabled: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # where a request without X-Coach-Workspace acts: the workspace the user was created in or last chose
    # (never changed by someone else; migration 0010). NULL: their oldest membership.
    default_workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", name="fk_users_default_workspace_id"), nullable=True
    )
    # bumped by logout: a session cookie issued with another version is refused (migration 0010)
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Membership(Base):
    """A user's role in one workspace: operator, lead or admin."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "workspace_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # set by an admin of this workspace: the member cannot act in it (their other workspaces are untouched)
    disabled: Mapped[bool] = mapped_column(default=False, server_default=text("false"))
    # the member's bearer tokens made up to this moment no longer act in this workspace (admin revocation)
    tokens_not_before: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class Invitation(FilledAtInit, Base):
    """An admin's offer of a role in their workspace to an email; it becomes a membership only when the
    owner of that email accepts it (migration 0010)."""

    __tablename__ = "invitations"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    email: Mapped[str] = mapped_column(String(254), index=True)
    role: Mapped[str] = mapped_column(String(16))
    invited_by: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | accepted | declined | cancelled
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class ApiToken(FilledAtInit, Base):
    """A bearer token: only its SHA-256 is stored; the token itself is shown once."""

    __tablename__ = "api_tokens"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
