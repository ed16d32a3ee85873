"""SQLAlchemy 2 models. Every row belongs to a workspace, directly or through its execution."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import uuid_utils
from sqlalchemy import (JSON, DateTime, Float, ForeignKey, Index, Integer, String, Text, TypeDecorator, UniqueConstraint,
                        event, text)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.sqlite import DATETIME as SQLITE_DATETIME
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from core.execution.engine import StepState

JsonType = JSON().with_variant(JSONB(), "postgresql")


def new_id() -> str:
    """A UUIDv7 (RFC 9562, from uuid-utils) as 32 hex digits: 48 bits of Unix milliseconds, then random bits. Ids
    made later sort later, so a new row's id lands at the right edge of every index on it, the page an insert just
    wrote, instead of a random page per index (random ids made each decision write several more pages)."""
    return uuid_utils.uuid7().hex


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class _SqliteUtcDateTime(SQLITE_DATETIME):
    """SQLite's DATETIME, its text written in one step: an aware value as UTC, the text exactly the dialect's
    storage format (`2026-11-24 15:54:07.080772`, microseconds always written). SQLAlchemy's own processor formats
    through a dict of seven fields, and every decision writes several datetimes."""

    cache_ok = True

    def bind_processor(self, dialect):
        dates = super().bind_processor(dialect)  # a date, or a type the dialect refuses: as SQLAlchemy does
        utc = timezone.utc

        def process(value):
            if type(value) is not datetime:
                return dates(value)
            if value.tzinfo is utc:
                return value.isoformat(" ", "microseconds")[:26]  # less the "+00:00"
            if value.tzinfo is not None:
                value = value.astimezone(utc).replace(tzinfo=None)
            return value.isoformat(" ", "microseconds")

        return process


class UtcDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them without an offset, as UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect):
        # SQLite: as UTC text (see there). PostgreSQL's timestamptz stores an aware value as the instant it is,
        # whatever its offset (no conversion needed), and gives it back aware
        return _SqliteUtcDateTime() if dialect.name == "sqlite" else super().load_dialect_impl(dialect)

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


class StepStates(TypeDecorator):
    """An execution's step states: stored as one JSON list in definition order, used as the ordered dict
    step_id → core StepState that the engine reads directly. Every field is written (rows written before
    session 9 left out those at their default: read the same)."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect):
        return dialect.type_descriptor(JSONB() if dialect.name == "postgresql" else JSON())

    def process_bind_param(self, value, dialect):
        # the StepState objects themselves: the engine's JSON serializer (services.jsontext, orjson) writes each as
        # an object of all its fields, datetimes in ISO 8601, in C; rewritten on every change to an execution
        return None if value is None else list(value.values())

    def process_result_value(self, value, dialect):
        steps = {}
        for item in value or ():
            st = StepState(**item)
            if st.started_at is not None:
                st.started_at = _utc(datetime.fromisoformat(st.started_at))
            if st.finished_at is not None:
                st.finished_at = _utc(datetime.fromisoformat(st.finished_at))
            steps[st.step_id] = st
        return steps


class Base(DeclarativeBase):
    pass


class NewId:
    """Ids and column defaults are filled when the object is made, not at flush, so an object can be
    read (pushed to clients, put in an answer) before anything is written."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for key, default in column_defaults(type(self))[1]:
            if key not in kwargs:
                setattr(self, key, default.arg(None) if default.is_callable else default.arg)


_DEFAULTS: dict[type, tuple[frozenset[str], tuple]] = {}


def column_defaults(cls) -> tuple[frozenset[str], tuple]:
    """A model's column keys, and the Python-side defaults filled at construction (scalars and callables)."""
    found = _DEFAULTS.get(cls)
    if found is None:
        columns = cls.__table__.columns
        found = _DEFAULTS[cls] = (frozenset(c.key for c in columns), tuple(
            (c.key, c.default) for c in columns if c.default is not None
            and (getattr(c.default, "is_scalar", True) or getattr(c.default, "is_callable", False))))
    return found


class Workspace(NewId, Base):
    __tablename__ = "workspaces"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class WorkspaceOutbound(Base):
    """A workspace's own allow and deny lists for outbound requests (core/outbound; migration 0011).
    No row: both lists empty (public hosts only)."""

    __tablename__ = "workspace_outbound"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    allow: Mapped[list[str]] = mapped_column(JsonType, default=list)
    deny: Mapped[list[str]] = mapped_column(JsonType, default=list)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class WorkspaceLLM(Base):
    """A workspace's own LLM provider for agent steps (services/llm_provider.py; migration 0027). No row: the
    server's COACH_LLM_* settings. `api_key` is sealed (services/toolservers/secrets.py), '' when none is set."""

    __tablename__ = "workspace_llm"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    base_url: Mapped[str] = mapped_column(String(2000))
    model: Mapped[str] = mapped_column(String(200))
    api_key: Mapped[str] = mapped_column(Text, default="")
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Workflow(NewId, Base):
    __tablename__ = "workflows"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    current_version: Mapped[int] = mapped_column(Integer, default=1)
    mode: Mapped[str] = mapped_column(String(16), default="coaching")
    # workflow | plan: a plan's inline steps are a hidden workflow of one version (services/plans.py), left out of
    # the workflow list, the metrics list and the dashboard (migration 0015)
    kind: Mapped[str] = mapped_column(String(16), default="workflow", server_default="workflow")
    settings: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    # bumped with every change to one of its correction packs: the key of each process's cache of its rules
    packs_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    versions: Mapped[list["WorkflowVersion"]] = relationship(back_populates="workflow", order_by="WorkflowVersion.version")


class WorkflowVersion(Base):
    __tablename__ = "workflow_versions"
    __table_args__ = (UniqueConstraint("workflow_id", "version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    definition: Mapped[dict[str, Any]] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    workflow: Mapped[Workflow] = relationship(back_populates="versions")


class Execution(NewId, Base):
    __tablename__ = "executions"
    __table_args__ = (Index("ix_executions_ws_created", "workspace_id", "created_at"),
                      # the gate deadline scanner's index: only executions waiting at a gate with a deadline
                      Index("ix_executions_gate_due", "gate_due_at", sqlite_where=text("gate_due_at IS NOT NULL"),
                            postgresql_where=text("gate_due_at IS NOT NULL")))
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
    # Changed only through services.executions.set_step, which tells the session (in-place changes).
    steps: Mapped[dict[str, StepState]] = mapped_column(StepStates, nullable=True, default=dict)
    # a coaching (or spot-checked auto) session's counters (services.executions.COACHING_STATS); NULL in normal mode.
    # The session's other state is the execution's status and its pending suggestion: nothing lives elsewhere.
    coaching_stats: Mapped[dict[str, int] | None] = mapped_column(JsonType, nullable=True)
    # the user id of whoever started it (NULL: started by the system, or before migration 0012); an approval with
    # separate_duties refuses them
    started_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # interactive control (core/execution/control.py): corrected steps, breakpoints, feedback; NULL until used, so
    # an execution nobody steered pays nothing for it (migration 0015)
    control: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    # the deadline of the human gate it waits at (gate["deadline"], core.gates), NULL without one: what the gate
    # deadline scanner reads (services.gates). Follows `gate` by itself (_gate_due below), whoever sets the gate.
    gate_due_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # the lease of the instance running one of its steps (services.runner): its id and until when it holds it,
    # renewed while the tool runs; NULL while no step is running (migration 0017)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    __mapper_args__ = {"version_id_col": row_version}


@event.listens_for(Execution.gate, "set")
def _gate_due(ex: Execution, gate: Any, _old: Any, _initiator: Any) -> None:
    """Every change of an execution's gate (opened, decided, answered, timed out, cancelled, paused) sets the
    scanner's column from it, so no path that moves an execution on can leave a deadline behind."""
    deadline = gate.get("deadline") if isinstance(gate, dict) else None
    ex.gate_due_at = datetime.fromisoformat(deadline) if isinstance(deadline, str) else None


class Plan(Base):
    """An ad-hoc plan (services/plans.py): its id is its execution's id; its status is that execution's (draft,
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


class Suggestion(NewId, Base):
    __tablename__ = "suggestions"
    # the work queue: a workspace's pending suggestions only (deciding one removes its entry; migration 0008)
    __table_args__ = (Index("ix_suggestions_pending", "workspace_id", "created_at",
                            sqlite_where=text("status = 'pending'"), postgresql_where=text("status = 'pending'")),)
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
    purpose: Mapped[str] = mapped_column(String(16), default="coaching")  # coaching | spot_check | correction
    # the policy's verdict on the suggested call, with its explanation (services.policies.for_step)
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
    # optimistic concurrency: every UPDATE checks and bumps `version`, so a change made from a stale read (a
    # decision on a suggestion another transaction decided meanwhile) fails instead of overwriting
    __mapper_args__ = {"version_id_col": version}


class AgentMessage(NewId, Base):
    """One message of an agent step's conversation (core/agent; migration 0018): written as the conversation grows,
    each LLM answer and each tool result committed before the next request, so a restarted server goes on from the
    stored conversation. `data` holds the role's own fields (core.agent.conversation.Message)."""

    __tablename__ = "agent_messages"
    __table_args__ = (UniqueConstraint("execution_id", "step_id", "seq", name="uq_agent_messages_seq"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"))
    step_id: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Decision(NewId, Base):
    __tablename__ = "decisions"
    # Keyed by the suggestion (SQLite: the row lives in that key's B-tree, WITHOUT ROWID); only keyed decisions
    # are in the Idempotency-Key index (migration 0009: fewer pages written per decision)
    __table_args__ = (Index("ux_decisions_idempotency_key", "workspace_id", "idempotency_key", unique=True,
                            sqlite_where=text("idempotency_key IS NOT NULL"),
                            postgresql_where=text("idempotency_key IS NOT NULL")),
                      # a step's decisions, newest first: the evidence behind its readiness (migration 0026)
                      Index("ix_decisions_step", "workspace_id", "workflow_id", "step_id", "created_at"),
                      {"sqlite_with_rowid": False})
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
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)


class Approval(NewId, Base):
    """An approval step or a policy-forced review of a tool call (core/approvals; migration 0012)."""

    __tablename__ = "approvals"
    __table_args__ = (
        Index("ix_approvals_ws_status_created", "workspace_id", "status", "created_at"),
        # the deadline scanner's index: only pending approvals with a deadline have a due_at
        Index("ix_approvals_due", "due_at", sqlite_where=text("due_at IS NOT NULL"),
              postgresql_where=text("due_at IS NOT NULL")),
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


class MetricBucket(Base):
    """One hour of one scope's decisions, for charts."""

    __tablename__ = "metric_buckets"
    __table_args__ = (UniqueConstraint("workspace_id", "scope", "key", "bucket"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    scope: Mapped[str] = mapped_column(String(24))
    key: Mapped[str] = mapped_column(String(200))
    bucket: Mapped[datetime] = mapped_column(UtcDateTime())
    counts: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)


class CorrectionPack(NewId, Base):
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


class User(NewId, Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str] = mapped_column(String(255))
    disabled: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # where a request without X-Coach-Workspace acts: the workspace the user was created in or last chose
    # (never changed by someone else; migration 0010). NULL: their oldest membership.
    default_workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", name="fk_users_default_workspace_id"), nullable=True)
    # bumped by logout: a session cookie issued with another version is refused (migration 0010)
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Membership(Base):
    """A user's role in one workspace: operator, lead or admin."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "workspace_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # set by an admin of this workspace: the member cannot act in it (their other workspaces are untouched)
    disabled: Mapped[bool] = mapped_column(default=False, server_default=text("false"))
    # the member's bearer tokens made up to this moment no longer act in this workspace (admin revocation)
    tokens_not_before: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class Invitation(NewId, Base):
    """An admin's offer of a role in their workspace to an email; it becomes a membership only when the
    owner of that email accepts it (migration 0010)."""

    __tablename__ = "invitations"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    email: Mapped[str] = mapped_column(String(254), index=True)
    role: Mapped[str] = mapped_column(String(16))
    invited_by: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | accepted | declined | cancelled
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class ApiToken(NewId, Base):
    """A bearer token: only its SHA-256 is stored; the token itself is shown once."""

    __tablename__ = "api_tokens"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class AuditEvent(NewId, Base):
    """Append-only, hash-chained per workspace (services/audit.py)."""

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


class PolicySettings(Base):
    """A workspace's policy revision and default (migration 0013). `revision` is bumped in the same transaction
    as every change to the workspace's rules or default: each process's compiled rule set is keyed by it."""

    __tablename__ = "policy_settings"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    defaults: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Policy(NewId, Base):
    """One policy rule (core/policy): match → effect, scoped to the workspace, a workflow or a user."""

    __tablename__ = "policies"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    order: Mapped[int] = mapped_column(Integer, default=0)
    effect: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    scope_workflow_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    scope_user: Mapped[str | None] = mapped_column(String(254), nullable=True)
    match: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    enabled: Mapped[bool] = mapped_column(default=True, server_default=text("true"))
    # the workspace's policy revision when this rule was last written
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ToolServer(NewId, Base):
    """An MCP server whose tools a workspace's steps may call as `<name>.<tool>` (services/toolservers,
    migration 0021). `secret` holds the headers (a bearer token among them) encrypted with the server's key;
    `tools` is the last tool list the server gave, so that every process validates and runs with the same."""

    __tablename__ = "tool_servers"
    __table_args__ = (UniqueConstraint("workspace_id", "name", name="uq_tool_servers_workspace_name"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(Text, default="")
    transport: Mapped[str] = mapped_column(String(16))  # http | stdio
    url: Mapped[str] = mapped_column(Text, default="")
    command: Mapped[list[str]] = mapped_column(JsonType, default=list)
    secret: Mapped[str] = mapped_column(Text, default="")  # Fernet token of {"headers": {...}}
    trusted: Mapped[bool] = mapped_column(default=False)
    enabled: Mapped[bool] = mapped_column(default=True)
    risk_overrides: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    tools: Mapped[list[dict[str, Any]]] = mapped_column(JsonType, default=list)
    listed_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(254), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


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
