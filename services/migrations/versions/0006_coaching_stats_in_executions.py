"""coaching session stats as a column of executions (the coaching_sessions table goes)

A decision wrote the execution row and the session row; now it writes one. A coaching session's state was
its execution's status (paused or not), its pending suggestion and these counters: the counters now live
in `executions.coaching_stats` (NULL for a normal execution). The session's `paused` flag repeated the
execution's status and `paused_at` was never read: both go.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 23:55:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("executions", sa.Column("coaching_stats", JSON, nullable=True))
    op.execute(
        "UPDATE executions SET coaching_stats = (SELECT s.stats FROM coaching_sessions s "
        "WHERE s.execution_id = executions.id)"
    )
    with op.batch_alter_table("coaching_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_coaching_sessions_workspace_id"))
    op.drop_table("coaching_sessions")


def downgrade() -> None:
    op.create_table(
        "coaching_sessions",
        sa.Column("execution_id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("paused_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stats", JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["execution_id"],
            ["executions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
        ),
        sa.PrimaryKeyConstraint("execution_id"),
    )
    with op.batch_alter_table("coaching_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_coaching_sessions_workspace_id"), ["workspace_id"], unique=False)
    op.execute(
        "INSERT INTO coaching_sessions (execution_id, workspace_id, paused, paused_at, stats, updated_at) "
        "SELECT id, workspace_id, status = 'paused', NULL, coaching_stats, updated_at FROM executions "
        "WHERE coaching_stats IS NOT NULL"
    )
    # in place (SQLite >= 3.35): a batch copy of executions would trip over the rows that reference it
    op.drop_column("executions", "coaching_stats")
