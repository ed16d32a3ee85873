"""policies and policy_settings: each workspace's policy rules, its default per tool risk, and the revision
that keys every process's compiled rule set

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 01:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0013"
down_revision = "0012"  # rebased onto 0012 (approvals) when the branches are merged
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "policy_settings",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), server_default="0", nullable=False),
        sa.Column("defaults", JsonType, nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )
    op.create_table(
        "policies",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("order", sa.Integer(), nullable=False),
        sa.Column("effect", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("scope_workflow_id", sa.String(length=32), nullable=True),
        sa.Column("scope_user", sa.String(length=254), nullable=True),
        sa.Column("match", JsonType, nullable=False),
        sa.Column("enabled", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_policies_workspace_id", "policies", ["workspace_id"])


def downgrade() -> None:
    op.drop_index("ix_policies_workspace_id", table_name="policies")
    op.drop_table("policies")
    op.drop_table("policy_settings")
