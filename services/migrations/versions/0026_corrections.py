"""decisions.outcome, and an index of a step's decisions (the evidence behind its readiness, newest first)

decisions.outcome: a correction whose step then failed because of it (core.coaching.soundness.FAILED_STEP) is
marked, and no longer counts towards a learned rule of its step's correction pack (issue 31, item 1)

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-27 21:45:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("decisions", sa.Column("outcome", sa.String(length=16), nullable=True))
    op.create_index("ix_decisions_step", "decisions", ["workspace_id", "workflow_id", "step_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_decisions_step", table_name="decisions")
    op.drop_column("decisions", "outcome")
