"""Web Push (issue 33, item 1): push_subscriptions (a person's browsers that accepted push), push_vapid_keys (this
installation's VAPID key pair, the private key sealed), and a person's push switches in notification_prefs.

Revision ID: 0032_web_push
Revises: 0031_slack
Create Date: 2026-11-28 01:20:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0032_web_push"
down_revision = "0031_slack"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("endpoint", sa.String(length=2000), nullable=False),
        sa.Column("endpoint_hash", sa.String(length=64), nullable=False),
        sa.Column("p256dh", sa.String(length=200), nullable=False),
        sa.Column("auth", sa.String(length=100), nullable=False),
        sa.Column("user_agent", sa.String(length=300), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("endpoint_hash", name="uq_push_subscriptions_endpoint"),
    )
    op.create_index("ix_push_subscriptions_user_id", "push_subscriptions", ["user_id"])
    op.create_table(
        "push_vapid_keys",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("public_key", sa.String(length=200), nullable=False),
        sa.Column("private_key", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("notification_prefs") as batch:
        batch.add_column(sa.Column("push", sa.Boolean(), nullable=False, server_default=sa.true()))
        batch.add_column(sa.Column("push_kinds", JsonType, nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("notification_prefs") as batch:
        batch.drop_column("push_kinds")
        batch.drop_column("push")
    op.drop_table("push_vapid_keys")
    op.drop_index("ix_push_subscriptions_user_id", table_name="push_subscriptions")
    op.drop_table("push_subscriptions")
