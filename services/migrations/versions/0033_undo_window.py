"""workspace_undo: a workspace's own undo window, the seconds a decision on a risky call is held before its step runs
so that it can be taken back (issue 31, item 4). Held decisions themselves need no column: a suggestion's status
`held` and the execution's gate of kind `held` say it.

Revision ID: 0033_undo_window
Revises: 0032_web_push
Create Date: 2026-11-28 01:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0033_undo_window"
down_revision = "0032_web_push"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_undo",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("window_s", sa.Float(), nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )


def downgrade() -> None:
    op.drop_table("workspace_undo")
