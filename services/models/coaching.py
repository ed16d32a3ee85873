"""Suggestions, the decisions on them, and the correction packs learned from corrections."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint, or_, text
from sqlalchemy.orm import Mapped, mapped_column

from core.coaching.checks import DECISION_OUTCOMES as CHECK_OUTCOMES
from services.orm import Base, FilledAtInit, JsonType, UtcDateTime, new_id, utcnow


class Suggestion(FilledAtInit, Base):
    __tablename__ = "suggestions"
    # the work queue: a workspace's pending suggestions only (deciding one removes its entry; migration 0008)
    __table_args__ = (
        Index(
            "ix_suggestions_pending",
            "workspace_id",
            "created_at",
            sqlite_where=text("status = 'pending'"),
            postgresql_where=text("status = 'pending'"),
        ),
        # a workspace's suggestions whose decision is held for its undo window: the totals leave those decisions
        # out until released (services/metrics/totals.py, migration 0041)
        Index(
            "ix_suggestions_held",
            "workspace_id",
            sqlite_where=text("status = 'held'"),
            postgresql_where=text("status = 'held'"),
        ),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"), index=True)
    workflow_id: Mapped[str] = mapped_column(String(32))
    workflow_version: Mapped[int] = mapped_column(Integer)
    step_id: Mapped[str] = mapped_column(String(64))
    tool: Mapped[str | None] = mapped_column(String(128), nullable=True)
    params: Mapped[Any] = mapped_column(JsonType, nullable=True)
    definition_params: Mapped[Any] = mapped_column(JsonType, nullable=True)
    rationale: Mapped[str] = mapped_column(Text, default="")
    confidence: Mapped[float] = mapped_column(default=0.0)
    source: Mapped[str] = mapped_column(String(80), default="definition")
    status: Mapped[str] = mapped_column(String(16), default="pending")
    version: Mapped[int] = mapped_column(Integer, default=1)
    purpose: Mapped[str] = mapped_column(String(16), default="coaching")  # coaching | spot_check | correction | check
    # the policy's verdict on the suggested call, with its explanation (services.policies.service.for_step)
    policy: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # when nobody deciding it in time sets off its step's on_human_timeout (core.gates); NULL: no deadline, or
    # the session is paused (resuming gives it its time again)
    deadline: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # step | tool_call: a call an agent step's LLM asked for (its tool message: agent_message_id; migration 0018)
    kind: Mapped[str] = mapped_column(String(16), default="step", server_default="step")
    agent_message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    tool_call_id: Mapped[str | None] = mapped_column(String(200), nullable=True)  # as the LLM named the call
    # the region the call fell in when it was asked, and its condition version: its decision counts there
    # (services/regions, migration 0037); NULL: in no region
    region_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    region_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # a check suggestion's change (core.coaching.checks.CheckChange: param, shown, real; migration 0039), never shown
    # with it; NULL on every other suggestion
    check_change: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    # optimistic concurrency: every UPDATE checks and bumps `version`, so a change made from a stale read (a
    # decision on a suggestion another transaction decided meanwhile) fails instead of overwriting
    __mapper_args__ = {"version_id_col": version}


class Decision(FilledAtInit, Base):
    __tablename__ = "decisions"
    # Keyed by the suggestion (SQLite: the row lives in that key's B-tree, WITHOUT ROWID); only keyed decisions
    # are in the Idempotency-Key index (migration 0009: fewer pages written per decision)
    __table_args__ = (
        Index(
            "ux_decisions_idempotency_key",
            "workspace_id",
            "idempotency_key",
            unique=True,
            sqlite_where=text("idempotency_key IS NOT NULL"),
            postgresql_where=text("idempotency_key IS NOT NULL"),
        ),
        # a step's decisions, newest first: the evidence behind its readiness (migration 0026)
        Index("ix_decisions_step", "workspace_id", "workflow_id", "step_id", "created_at"),
        # the charts' hourly series, counted when read (services/metrics/series.py, migration 0034)
        Index("ix_decisions_time", "workspace_id", "created_at"),
        {"sqlite_with_rowid": False},
    )
    # the primary key: exactly one decision per suggestion, enforced by the database even under a race
    suggestion_id: Mapped[str] = mapped_column(ForeignKey("suggestions.id"), primary_key=True)
    id: Mapped[str] = mapped_column(String(32), default=new_id)  # the decision_id answers carry; not looked up
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    # not indexed: nothing looks decisions up by execution or workflow (migration 0008)
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"))
    workflow_id: Mapped[str] = mapped_column(String(32))
    step_id: Mapped[str] = mapped_column(String(64))
    decision: Mapped[str] = mapped_column(String(16))
    correction: Mapped[Any] = mapped_column(JsonType, nullable=True)
    manual_output: Mapped[Any] = mapped_column(JsonType, nullable=True)
    feedback: Mapped[str | None] = mapped_column(Text, nullable=True)
    operator: Mapped[str] = mapped_column(String(200))
    latency_ms: Mapped[float] = mapped_column(default=0.0)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    response: Mapped[Any] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # step_failed: the corrected step (or a step reading it) then failed because of the correction, which no
    # longer counts in the step's correction pack (core.coaching.soundness; migration 0026)
    # (a check's decision: check_miss, check_catch or check_none, core.coaching.checks.OUTCOMES; migration 0039)
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # whether it is readiness evidence, judged when it counted (services.coaching.counting.attention_of; migration
    # 0039): attentive (by an attentive operator), counted (by another, every decision counting), left_out (by
    # another, the workspace taking evidence from attentive operators only); NULL: not judged (checks and the
    # restriction off), counted
    evidence: Mapped[str | None] = mapped_column(String(16), nullable=True)


def not_a_check():
    """SQL: a decision that is no check's (those are nobody's evidence: core/coaching/checks.py)."""
    return or_(Decision.outcome.is_(None), Decision.outcome.not_in(CHECK_OUTCOMES))


class CorrectionPack(FilledAtInit, Base):
    __tablename__ = "correction_packs"
    __table_args__ = (UniqueConstraint("workflow_id", "step_id"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    # a step id, or `<agent step>:<tool>` for the calls of one tool by an agent step (migration 0018 widened it)
    step_id: Mapped[str] = mapped_column(String(200))
    enabled: Mapped[bool] = mapped_column(default=True)
    stats: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
