"""Every workspace has its policy_settings row (revision 0, no defaults until a lead sets some)

Every judged call reads the workspace's policy revision (services.policies). A workspace that never had a rule had no
row, and a missing row is read again at each call (a session's identity map holds rows, not their absence): a
decision read it up to three times. New workspaces get the row when they are made (services.users.create_workspace,
the default workspace); this adds it to those made before. The downgrade leaves the rows: they say what their
absence said.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27 18:50:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    workspaces = sa.table("workspaces", sa.column("id", sa.String))
    settings = sa.table(
        "policy_settings",
        sa.column("workspace_id", sa.String),
        sa.column("revision", sa.Integer),
        sa.column("defaults", sa.JSON),
        sa.column("updated_by", sa.String),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    empty = sa.text("CAST('{}' AS JSONB)") if op.get_bind().dialect.name == "postgresql" else sa.text("'{}'")
    missing = sa.select(workspaces.c.id, sa.literal(0), empty, sa.literal(""), sa.func.current_timestamp()).where(
        ~sa.exists().where(settings.c.workspace_id == workspaces.c.id)
    )
    op.execute(
        settings.insert().from_select(["workspace_id", "revision", "defaults", "updated_by", "updated_at"], missing)
    )


def downgrade() -> None:
    pass
