"""workspace_outbound: each workspace's allow and deny lists of hosts for outbound requests (http.request)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 21:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "workspace_outbound",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("allow", JsonType, nullable=False),
        sa.Column("deny", JsonType, nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )


def downgrade() -> None:
    op.drop_table("workspace_outbound")
