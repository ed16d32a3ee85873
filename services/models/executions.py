"""Executions: a run of a workflow version (or a plan), its step states and its gate."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, event, text
from sqlalchemy.orm import Mapped, mapped_column

from core.execution.engine import StepState
from services.orm import Base, FilledAtInit, JsonType, StepStates, UtcDateTime, new_id, utcnow


class Execution(FilledAtInit, Base):
    __tablename__ = "executions"
    __table_args__ = (
        Index("ix_executions_ws_created", "workspace_id", "created_at"),
        # the gate deadline scanner's index: only executions waiting at a gate with a deadline
        Index(
            "ix_executions_gate_due",
            "gate_due_at",
            sqlite_where=text("gate_due_at IS NOT NULL"),
            postgresql_where=text("gate_due_at IS NOT NULL"),
        ),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    workflow_version: Mapped[int] = mapped_column(Integer)
    mode: Mapped[str] = mapped_column(String(16), default="normal")
    status: Mapped[str] = mapped_column(String(32), default="pending", index=True)
    variables: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    error: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    gate: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # optimistic concurrency: a write based on a stale read fails instead of overwriting
    row_version: Mapped[int] = mapped_column(Integer, default=1)
    # every step's state, in definition order (StepStates): one column, so a decision writes one row.
    # Changed only through services.executions.service.set_step, which tells the session (in-place changes).
    steps: Mapped[dict[str, StepState]] = mapped_column(StepStates, nullable=True, default=dict)
    # a coaching (or spot-checked auto) session's counters (services.executions.service.COACHING_STATS); NULL in normal
    # mode. The session's other state is the execution's status and its pending suggestion: nothing lives elsewhere.
    coaching_stats: Mapped[dict[str, int] | None] = mapped_column(JsonType, nullable=True)
    # the user id of whoever started it (NULL: started by the system, or before migration 0012); an approval with
    # separate_duties refuses them
    started_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # interactive control (core/execution/control.py): corrected steps, breakpoints, feedback; NULL until used, so
    # an execution nobody steered pays nothing for it (migration 0015)
    control: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    # the deadline of the human gate it waits at (gate["deadline"], core.gates), NULL without one: what the gate
    # deadline scanner reads (services.executions.gates). Follows `gate` by itself (_gate_due below), whoever sets the
    # gate.
    gate_due_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # the lease of the instance running one of its steps (services.orchestration.runner): its id and until when it holds
    # it, renewed while the tool runs; NULL while no step is running (migration 0017)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    __mapper_args__ = {"version_id_col": row_version}


@event.listens_for(Execution.gate, "set")
def _gate_due(ex: Execution, gate: Any, _old: Any, _initiator: Any) -> None:
    """Every change of an execution's gate (opened, decided, answered, timed out, cancelled, paused) sets the
    scanner's column from it, so no path that moves an execution on can leave a deadline behind."""
    deadline = gate.get("deadline") if isinstance(gate, dict) else None
    ex.gate_due_at = datetime.fromisoformat(deadline) if isinstance(deadline, str) else None
