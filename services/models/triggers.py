"""The rows of triggers (migration 0028): incoming webhooks, schedules, and what each start came from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class TriggerHook(FilledAtInit, Base):
    """An incoming webhook of a workflow. `secret` is the HMAC key sealed with the server's key
    (services/toolservers/secrets.py, its own purpose): the server must recompute signatures, so it is encrypted,
    not hashed, and shown once. A revoked hook answers 410."""

    __tablename__ = "trigger_hooks"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    secret: Mapped[str] = mapped_column(Text)
    # variable -> dotted path in the body; {}: the body's top-level keys are the variables (core/triggers.py)
    mapping: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)  # None: the workflow's own mode
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class TriggerSchedule(FilledAtInit, Base):
    """A cron schedule of a workflow. `next_fire_at` is the claim: a scanner fires a due schedule only when its
    conditional UPDATE (… WHERE id = ? AND next_fire_at = <what it read>) changes the row, in the transaction that
    starts the execution (services/triggers/schedules.py). NULL while disabled."""

    __tablename__ = "trigger_schedules"
    __table_args__ = (
        Index(
            "ix_trigger_schedules_due",
            "next_fire_at",
            sqlite_where=text("next_fire_at IS NOT NULL"),
            postgresql_where=text("next_fire_at IS NOT NULL"),
        ),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    cron: Mapped[str] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64))
    variables: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    enabled: Mapped[bool] = mapped_column(default=True)
    next_fire_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_fired_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_execution_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class TriggerStart(FilledAtInit, Base):
    """One execution started by a trigger: which hook (and the sender's delivery id) or which schedule (and the slot
    it fired for). The unique (hook_id, delivery_id) makes a delivery start at most one execution, also when two
    copies arrive at once; the unique (schedule_id, fire_at) guards a slot the same way."""

    __tablename__ = "trigger_starts"
    __table_args__ = (
        UniqueConstraint("execution_id", name="uq_trigger_starts_execution"),
        UniqueConstraint("hook_id", "delivery_id", name="uq_trigger_starts_delivery"),
        UniqueConstraint("schedule_id", "fire_at", name="uq_trigger_starts_slot"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"))
    kind: Mapped[str] = mapped_column(String(16))  # webhook | schedule
    name: Mapped[str] = mapped_column(String(100), default="")  # the hook's or schedule's name when it started
    hook_id: Mapped[str | None] = mapped_column(ForeignKey("trigger_hooks.id"), nullable=True)
    delivery_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    schedule_id: Mapped[str | None] = mapped_column(ForeignKey("trigger_schedules.id"), nullable=True)
    fire_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
