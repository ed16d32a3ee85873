"""The hash-chained audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, utcnow


class AuditEvent(FilledAtInit, Base):
    """Append-only, hash-chained per workspace (services/audit/service.py)."""

    __tablename__ = "audit_events"
    __table_args__ = (UniqueConstraint("workspace_id", "seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    seq: Mapped[int] = mapped_column(Integer)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(40))
    target_type: Mapped[str] = mapped_column(String(40))
    target_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    execution_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    before: Mapped[Any] = mapped_column(JsonType, nullable=True)
    after: Mapped[Any] = mapped_column(JsonType, nullable=True)
    result: Mapped[str] = mapped_column(String(40), default="ok")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
