"""The MCP gateway: agent identities, the calls they made through it, the built-in tools exposed to them, and the
learning state beside them (migration 0028_gateway_learning): what a lead chose for each tool, or for a tool for one
identity, and each tool's correction pack. The evidence itself is in metric_scopes (core/gateway_learning.py's
scopes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class AgentIdentity(FilledAtInit, Base):
    """An agent that calls the workspace's tools through the MCP gateway (services/gateway, migration 0025): only
    its bearer token's SHA-256 is stored; the token is shown once."""

    __tablename__ = "agent_identities"
    __table_args__ = (UniqueConstraint("token_hash", name="uq_agent_identities_token_hash"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    token_hash: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class GatewayCall(FilledAtInit, Base):
    """One `tools/call` an agent made through the gateway that a person must review (or reviewed): held until
    decided, forwarded at most once, its result kept until the agent has it (services/gateway/calls.py).
    state: held -> forwarding -> done | failed, or held -> rejected, or held -> cancelled (its identity was revoked);
    delivered_at once the agent was answered."""

    __tablename__ = "gateway_calls"
    __table_args__ = (Index("ix_gateway_calls_key", "agent_id", "call_key", "delivered_at"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    agent_id: Mapped[str] = mapped_column(ForeignKey("agent_identities.id"))
    agent_name: Mapped[str] = mapped_column(String(100))
    tool: Mapped[str] = mapped_column(String(128))
    arguments: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    call_key: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(16), default="held")
    approval_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    policy: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    result_bytes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    forwarded_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)  # claimed for forwarding
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    row_version: Mapped[int] = mapped_column(Integer, default=1)
    __mapper_args__ = {"version_id_col": row_version}


class GatewayToolMode(Base):
    """A gateway tool's mode (`auto`, `always_review`; no row: coaching), for every identity (`agent` '') or for one
    identity (its name), and the tool's own spot-check rate (NULL: COACH_SPOT_CHECK_RATE)."""

    __tablename__ = "gateway_tool_modes"
    __table_args__ = (UniqueConstraint("workspace_id", "tool", "agent", name="uq_gateway_tool_modes"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    tool: Mapped[str] = mapped_column(String(128))
    agent: Mapped[str] = mapped_column(String(100), default="")
    mode: Mapped[str] = mapped_column(String(16), default="coaching")
    spot_check_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class GatewayCorrectionPack(FilledAtInit, Base):
    """The reviewers' edits of one gateway tool's arguments, grouped by what they changed (core/coaching/corrections:
    the steps' PackStats in `stats`). Made disabled: its learned rules apply (offered to the reviewer, applied in AUTO)
    once a lead enables it."""

    __tablename__ = "gateway_correction_packs"
    __table_args__ = (UniqueConstraint("workspace_id", "tool", name="uq_gateway_correction_packs"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    tool: Mapped[str] = mapped_column(String(128))
    enabled: Mapped[bool] = mapped_column(default=False)
    stats: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class GatewayBuiltins(Base):
    """The built-in tools (services/tools) a workspace's admin exposes to its agents through the gateway, by their
    registry names (`echo`, `http.request`); agents see them as `coach.<name>` (services/gateway/builtins.py).
    No row: none (migration 0035_gateway_builtins)."""

    __tablename__ = "gateway_builtins"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    tools: Mapped[list[str]] = mapped_column(JsonType, default=list)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
