"""gateway_builtins: the built-in tools (echo, http.request, ...) a workspace's admin exposes to its agents through
the MCP gateway, where they are listed as `coach.<tool>` (issue 32, item 1). No row: none.

Revision ID: 0035_gateway_builtins
Revises: 0034_series_from_decisions
Create Date: 2026-11-28 03:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0035_gateway_builtins"
down_revision = "0034_series_from_decisions"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "gateway_builtins",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("tools", JsonType, nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )


def downgrade() -> None:
    op.drop_table("gateway_builtins")
