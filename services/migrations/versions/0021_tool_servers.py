"""tool_servers: a workspace's MCP servers (streamable HTTP or allowed stdio commands), their encrypted headers,
trust, per-tool risk overrides and last tool list

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-24 04:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0021"
down_revision = "0020"  # written against 0016 on its branch; chained after whatever the merge puts last
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "tool_servers",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("transport", sa.String(length=16), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("command", JsonType, nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("trusted", sa.Boolean(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("risk_overrides", JsonType, nullable=False),
        sa.Column("tools", JsonType, nullable=False),
        sa.Column("listed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "name", name="uq_tool_servers_workspace_name"),
    )
    op.create_index("ix_tool_servers_workspace_id", "tool_servers", ["workspace_id"])


def downgrade() -> None:
    op.drop_index("ix_tool_servers_workspace_id", table_name="tool_servers")
    op.drop_table("tool_servers")
