"""gateway_tool_modes: the mode a lead chose for each MCP gateway tool, or for a tool for one agent identity (coaching,
auto, always_review), with the tool's own spot-check rate; gateway_correction_packs: the reviewers' edits of each
tool's arguments and the rules learned from them (issue 32, item 3). The evidence is in metric_scopes.

Revision ID: 0030_gateway_learning
Revises: 0029_notifications
Create Date: 2026-11-28 00:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0030_gateway_learning"
down_revision = "0029_notifications"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "gateway_tool_modes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("agent", sa.String(length=100), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("spot_check_rate", sa.Float(), nullable=True),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "tool", "agent", name="uq_gateway_tool_modes"),
    )

    op.create_table(
        "gateway_correction_packs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("stats", JsonType, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "tool", name="uq_gateway_correction_packs"),
    )


def downgrade() -> None:
    op.drop_table("gateway_correction_packs")
    op.drop_table("gateway_tool_modes")
