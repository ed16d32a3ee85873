"""Policy rules, each workspace's policy settings and its outbound lists."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class WorkspaceOutbound(Base):
    """A workspace's own allow and deny lists for outbound requests (core/outbound; migration 0011).
    No row: both lists empty (public hosts only)."""

    __tablename__ = "workspace_outbound"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    allow: Mapped[list[str]] = mapped_column(JsonType, default=list)
    deny: Mapped[list[str]] = mapped_column(JsonType, default=list)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class PolicySettings(Base):
    """A workspace's policy revision and default (migration 0013). `revision` is bumped in the same transaction
    as every change to the workspace's rules or default: each process's compiled rule set is keyed by it."""

    __tablename__ = "policy_settings"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    defaults: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Policy(FilledAtInit, Base):
    """One policy rule (core/policy): match → effect, scoped to the workspace, a workflow or a user."""

    __tablename__ = "policies"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    order: Mapped[int] = mapped_column(Integer, default=0)
    effect: Mapped[str] = mapped_column(String(16))
    # a confirm rule's fallback (require_review | deny): what applies when nobody at the agent can be asked
    fallback: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    scope_workflow_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    scope_user: Mapped[str | None] = mapped_column(String(254), nullable=True)
    match: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    enabled: Mapped[bool] = mapped_column(default=True, server_default=text("true"))
    # the workspace's policy revision when this rule was last written
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
