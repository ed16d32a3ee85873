"""workspace_slack and slack_users: each workspace's Slack app (bot token and signing secret sealed with
services/toolservers/secrets.py, a default channel) and each member's Slack user id (issue 33, Slack)

Revision ID: 0031_slack
Revises: 0030_gateway_learning
Create Date: 2026-11-28 01:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0031_slack"
down_revision = "0030_gateway_learning"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_slack",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("bot_token", sa.Text(), nullable=False),
        sa.Column("signing_secret", sa.Text(), nullable=False),
        sa.Column("default_channel", sa.String(length=64), nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )
    op.create_table(
        "slack_users",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("slack_user_id", sa.String(length=32), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "user_id", name="uq_slack_users_member"),
        sa.UniqueConstraint("workspace_id", "slack_user_id", name="uq_slack_users_slack_id"),
    )
    op.create_index("ix_slack_users_workspace_id", "slack_users", ["workspace_id"])


def downgrade() -> None:
    op.drop_index("ix_slack_users_workspace_id", table_name="slack_users")
    op.drop_table("slack_users")
    op.drop_table("workspace_slack")
