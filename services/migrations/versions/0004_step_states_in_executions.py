"""step states as one JSON column of executions (the step_runs table goes)

A decision changed two or three step_runs rows and the execution row; now it changes one row. Each
execution's steps become a JSON list in definition order (services.models.StepStates):
{"step_id", "status", and, when set, "attempts", "output", "error", "params", "decision", "started_at",
"finished_at"} with times as ISO 8601 UTC.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 21:05:00
"""

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
FIELDS = ("output", "error", "params", "decision")
BATCH = 500

executions = sa.table("executions", sa.column("id", sa.String), sa.column("steps", JSON))
step_runs = sa.table(
    "step_runs",
    sa.column("id", sa.Integer),
    sa.column("execution_id", sa.String),
    sa.column("step_id", sa.String),
    sa.column("position", sa.Integer),
    sa.column("status", sa.String),
    sa.column("output", JSON),
    sa.column("error", sa.Text),
    sa.column("attempts", sa.Integer),
    sa.column("params", JSON),
    sa.column("decision", sa.String),
    sa.column("started_at", sa.DateTime(timezone=True)),
    sa.column("finished_at", sa.DateTime(timezone=True)),
)


def _iso(value):
    if value is None:
        return None
    if isinstance(value, str):  # SQLite without type information
        value = datetime.fromisoformat(value)
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _time(value):
    return None if value is None else datetime.fromisoformat(value).astimezone(UTC)


def _write_steps(bind, rows):
    if rows:
        bind.execute(
            executions.update().where(executions.c.id == sa.bindparam("_id")).values(steps=sa.bindparam("_steps")), rows
        )


def upgrade() -> None:
    op.add_column("executions", sa.Column("steps", JSON, nullable=True))
    bind = op.get_bind()
    result = bind.execute(sa.select(step_runs).order_by(step_runs.c.execution_id, step_runs.c.position))
    pending: list[dict[str, Any]] = []
    current = None
    steps: list[dict[str, Any]] = []
    for row in result:
        if row.execution_id != current:
            if current is not None:
                pending.append({"_id": current, "_steps": steps})
            current, steps = row.execution_id, []
        item: dict[str, Any] = {"step_id": row.step_id, "status": row.status}
        if row.attempts:
            item["attempts"] = row.attempts
        for name in FIELDS:
            if getattr(row, name) is not None:
                item[name] = getattr(row, name)
        for name in ("started_at", "finished_at"):
            if getattr(row, name) is not None:
                item[name] = _iso(getattr(row, name))
        steps.append(item)
    if current is not None:
        pending.append({"_id": current, "_steps": steps})
    for start in range(0, len(pending), BATCH):
        _write_steps(bind, pending[start : start + BATCH])
    bind.execute(executions.update().where(executions.c.steps.is_(None)).values(steps=[]))
    with op.batch_alter_table("step_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_step_runs_execution_id"))
    op.drop_table("step_runs")


def downgrade() -> None:
    op.create_table(
        "step_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("execution_id", sa.String(length=32), nullable=False),
        sa.Column("step_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("output", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("params", JSON, nullable=True),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["execution_id"],
            ["executions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("execution_id", "step_id"),
    )
    with op.batch_alter_table("step_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_step_runs_execution_id"), ["execution_id"], unique=False)
    bind = op.get_bind()
    rows = []
    for ex in bind.execute(sa.select(executions.c.id, executions.c.steps)):
        for position, item in enumerate(ex.steps or []):
            rows.append(
                {
                    "execution_id": ex.id,
                    "step_id": item["step_id"],
                    "position": position,
                    "status": item.get("status", "pending"),
                    "attempts": item.get("attempts", 0),
                    **{name: item.get(name) for name in FIELDS},
                    "started_at": _time(item.get("started_at")),
                    "finished_at": _time(item.get("finished_at")),
                }
            )
    for start in range(0, len(rows), BATCH):
        bind.execute(step_runs.insert(), rows[start : start + BATCH])
    # in place (SQLite >= 3.35): a batch copy of executions would trip over the rows that reference it
    op.drop_column("executions", "steps")
