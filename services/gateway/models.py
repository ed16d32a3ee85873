"""The MCP gateway: agent identities and the calls they made through it."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, JsonType, NewId, UtcDateTime, new_id, utcnow


class AgentIdentity(NewId, Base):
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


class GatewayCall(NewId, Base):
    """One `tools/call` an agent made through the gateway that a person must review (or reviewed): held until
    decided, forwarded at most once, its result kept until the agent has it (services/gateway/calls.py).
    state: held -> forwarding -> done | failed, or held -> rejected; delivered_at once the agent was answered."""

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
