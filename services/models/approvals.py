"""Approvals: a human gate on a step, a tool call or a plan."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class Approval(FilledAtInit, Base):
    """An approval step or a policy-forced review of a tool call (core/approvals; migration 0012)."""

    __tablename__ = "approvals"
    __table_args__ = (
        Index("ix_approvals_ws_status_created", "workspace_id", "status", "created_at"),
        # the deadline scanner's index: only pending approvals with a deadline have a due_at
        Index(
            "ix_approvals_due",
            "due_at",
            sqlite_where=text("due_at IS NOT NULL"),
            postgresql_where=text("due_at IS NOT NULL"),
        ),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    # NULL for a gateway call's review (kind gateway, migration 0025): it belongs to no execution
    execution_id: Mapped[str | None] = mapped_column(ForeignKey("executions.id"), index=True, nullable=True)
    step_id: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16), default="step")  # step | tool_call | plan | gateway
    agent: Mapped[str | None] = mapped_column(String(100), nullable=True)  # gateway: the calling agent's name
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | approved | rejected | expired
    message: Mapped[str] = mapped_column(Text, default="")
    tool: Mapped[str | None] = mapped_column(String(128), nullable=True)
    params: Mapped[Any] = mapped_column(JsonType, nullable=True)
    policy: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)  # the verdict that forced it
    approvers: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    quorum: Mapped[int] = mapped_column(Integer, default=1)
    separate_duties: Mapped[bool] = mapped_column(default=False)
    started_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    decisions: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    # Idempotency-Key -> the first answer, for replays
    replies: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    timeout_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    on_timeout: Mapped[str] = mapped_column(String(16), default="reject")
    deadline: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # = deadline while pending, NULL once decided: what the deadline scanner reads
    due_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    row_version: Mapped[int] = mapped_column(Integer, default=1)
    __mapper_args__ = {"version_id_col": row_version}
