"""Ad-hoc plans: who created and approved them (their execution holds the rest)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, UtcDateTime, utcnow


class Plan(Base):
    """An ad-hoc plan (services/plans/service.py): its id is its execution's id; its status is that execution's (draft,
    approved, then the execution states). Who created and approved it (migration 0015)."""

    __tablename__ = "plans"
    __table_args__ = (Index("ix_plans_ws_created", "workspace_id", "created_at"),)
    id: Mapped[str] = mapped_column(ForeignKey("executions.id"), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    created_by: Mapped[str] = mapped_column(String(254))
    approver_role: Mapped[str] = mapped_column(String(16), default="lead")  # the role its approval needed
    approved_by: Mapped[str | None] = mapped_column(String(254), nullable=True)
    approved_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    saved_workflow_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
