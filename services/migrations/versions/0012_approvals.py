"""approvals: approval steps and policy-forced reviews, with a due_at the deadline scanner reads; executions.started_by

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 10:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("executions", sa.Column("started_by", sa.String(length=32), nullable=True))
    op.create_table(
        "approvals",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("execution_id", sa.String(length=32), nullable=False),
        sa.Column("step_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=True),
        sa.Column("params", JsonType, nullable=True),
        sa.Column("policy", JsonType, nullable=True),
        sa.Column("approvers", JsonType, nullable=False),
        sa.Column("quorum", sa.Integer(), nullable=False),
        sa.Column("separate_duties", sa.Boolean(), nullable=False),
        sa.Column("started_by", sa.String(length=32), nullable=True),
        sa.Column("decisions", JsonType, nullable=False),
        sa.Column("replies", JsonType, nullable=False),
        sa.Column("timeout_s", sa.Float(), nullable=True),
        sa.Column("on_timeout", sa.String(length=16), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("row_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["execution_id"], ["executions.id"]),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_approvals_execution_id", "approvals", ["execution_id"])
    op.create_index("ix_approvals_ws_status_created", "approvals", ["workspace_id", "status", "created_at"])
    op.create_index(
        "ix_approvals_due",
        "approvals",
        ["due_at"],
        sqlite_where=sa.text("due_at IS NOT NULL"),
        postgresql_where=sa.text("due_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_approvals_due", table_name="approvals")
    op.drop_index("ix_approvals_ws_status_created", table_name="approvals")
    op.drop_index("ix_approvals_execution_id", table_name="approvals")
    op.drop_table("approvals")
    # ALTER TABLE … DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of executions would drop the
    # table that suggestions, decisions and approvals refer to
    op.execute("ALTER TABLE executions DROP COLUMN started_by")
