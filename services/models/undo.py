"""A workspace's own undo window (core/coaching/undo.py; migration 0031). No row: the server's COACH_UNDO_WINDOW_S."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, UtcDateTime, utcnow


class WorkspaceUndo(Base):
    __tablename__ = "workspace_undo"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    # seconds a decision on a risky call is held before its step runs; 0: never held in this workspace
    window_s: Mapped[float] = mapped_column()
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
