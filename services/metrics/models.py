"""Each metric scope's running counts (the charts' hourly series are counted from the decisions: series.py)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, JsonType, UtcDateTime, utcnow


class MetricScope(Base):
    """Running metrics of one scope (global, workflow, workflow version, step, operator, spot checks),
    updated in each decision's own transaction so that reads never scan history."""

    __tablename__ = "metric_scopes"
    __table_args__ = (UniqueConstraint("workspace_id", "scope", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    scope: Mapped[str] = mapped_column(String(24))
    key: Mapped[str] = mapped_column(String(200))
    state: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)


class WorkspaceReviewFloor(Base):
    """A workspace's own floor for attentive reviews (core/coaching/attention.py; migration 0037): an accept faster
    than it is counted as fast on the reviewers' figures. No row: core.coaching.attention.DEFAULT_FLOOR_MS."""

    __tablename__ = "workspace_review_floor"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    attentive_floor_ms: Mapped[int] = mapped_column(Integer)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
