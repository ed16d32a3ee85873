"""The gateway's learning state beside its calls (migration 0028): what a lead chose for each tool of the MCP gateway,
or for a tool for one agent identity, and each tool's correction pack. The evidence itself is in metric_scopes
(core/gateway_learning.py's scopes)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.models import Base, JsonType, NewId, UtcDateTime, new_id, utcnow


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


class GatewayCorrectionPack(NewId, Base):
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
