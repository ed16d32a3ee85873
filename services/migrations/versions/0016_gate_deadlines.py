"""gate deadlines: executions.gate_due_at (indexed, what the scanner reads) and suggestions.deadline

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("executions", sa.Column("gate_due_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_executions_gate_due",
        "executions",
        ["gate_due_at"],
        sqlite_where=sa.text("gate_due_at IS NOT NULL"),
        postgresql_where=sa.text("gate_due_at IS NOT NULL"),
    )
    op.add_column("suggestions", sa.Column("deadline", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # in place (SQLite >= 3.35): a batch copy would trip over the rows that reference these tables
    op.drop_column("suggestions", "deadline")
    op.drop_index("ix_executions_gate_due", table_name="executions")
    op.drop_column("executions", "gate_due_at")
