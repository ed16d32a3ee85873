"""series_from_decisions: the dashboards' hourly series are counted from the decisions when a chart is read
(services/metrics/series.py), no longer kept in `metric_buckets` by every decision (one statement less on the decision
path, and no JSON merged in SQL per dialect). The index on decisions (workspace_id, created_at) reads two weeks of them.

The series come out the same from the decisions already stored, so nothing is carried over. Downgrade makes the table
again, empty (its charts start from then).

Revision ID: 0034_series_from_decisions
Revises: 0033_undo_window
Create Date: 2026-11-28 03:30:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0034_series_from_decisions"
down_revision = "0033_undo_window"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_decisions_time", "decisions", ["workspace_id", "created_at"])
    op.drop_table("metric_buckets")


def downgrade() -> None:
    op.create_table(
        "metric_buckets",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("scope", sa.String(length=24), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "counts", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "scope", "key", "bucket"),
    )
    op.drop_index("ix_decisions_time", table_name="decisions")
