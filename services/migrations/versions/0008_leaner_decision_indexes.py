"""leaner indexes on the rows every decision writes

Each index is another page every decision writes. Nothing looks decisions up by execution or workflow (an
execution's history is its step states and audit events; decisions are found by suggestion or
Idempotency-Key, both unique): those two indexes go. The work queue asks a workspace's *pending* suggestions
only: its index keeps only those (a partial index), so deciding a suggestion removes an entry instead of
moving it, and decided suggestions, most of the table, cost the index nothing.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 00:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    op.drop_index("ix_decisions_workflow_id", table_name="decisions")
    op.drop_index("ix_decisions_execution_id", table_name="decisions")
    op.drop_index("ix_suggestions_ws_status", table_name="suggestions")
    op.create_index(
        "ix_suggestions_pending",
        "suggestions",
        ["workspace_id", "created_at"],
        unique=False,
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_suggestions_pending", table_name="suggestions")
    op.create_index("ix_suggestions_ws_status", "suggestions", ["workspace_id", "status", "created_at"], unique=False)
    op.create_index("ix_decisions_execution_id", "decisions", ["execution_id"], unique=False)
    op.create_index("ix_decisions_workflow_id", "decisions", ["workflow_id"], unique=False)
