"""workspace_llm: each workspace's own LLM provider for agent steps (an OpenAI-compatible base URL, a model, an API
key sealed with services/toolservers/secrets.py), set by its admins in the web app (issue 31, item 8)

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-27 22:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_llm",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("base_url", sa.String(length=2000), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("api_key", sa.Text(), nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )


def downgrade() -> None:
    op.drop_table("workspace_llm")
