"""plans: ad-hoc plans (a hidden workflow of kind 'plan' + a plans row), executions.control for interactive control

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 10:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("workflows", sa.Column("kind", sa.String(16), nullable=False, server_default="workflow"))
    op.add_column("executions", sa.Column("control", JsonType, nullable=True))
    op.create_table(
        "plans",
        sa.Column("id", sa.String(32), sa.ForeignKey("executions.id"), primary_key=True),
        sa.Column("workspace_id", sa.String(32), sa.ForeignKey("workspaces.id"), nullable=False),
        sa.Column("created_by", sa.String(254), nullable=False),
        sa.Column("approver_role", sa.String(16), nullable=False),
        sa.Column("approved_by", sa.String(254), nullable=True),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("saved_workflow_id", sa.String(32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_plans_ws_created", "plans", ["workspace_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_plans_ws_created", table_name="plans")
    op.drop_table("plans")
    op.drop_column("executions", "control")
    op.drop_column("workflows", "kind")
