"""notifications (issue 33): the outbox, people's preferences, a workspace's routes and outgoing webhook endpoints,
escalations, and the action links sent by email (services/models/notifications.py)

Revision ID: 0029_notifications
Revises: 0028_triggers
Create Date: 2026-11-28 00:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0029_notifications"
down_revision = "0028_triggers"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def _at(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "notification_outbox",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=2000), nullable=False),
        sa.Column("payload", JsonType, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _at("next_attempt_at"),
        sa.Column("held_reason", sa.String(length=200), nullable=True),
        _at("lease_until", True),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        _at("sent_at", True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id", "recipient", "channel", name="uq_notification_outbox_event_recipient"),
    )
    op.create_index("ix_notification_outbox_due", "notification_outbox", ["status", "next_attempt_at"])
    op.create_index(
        "ix_notification_outbox_ws_recipient", "notification_outbox", ["workspace_id", "recipient", "created_at"]
    )
    op.create_table(
        "notification_prefs",
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.Boolean(), nullable=False),
        sa.Column("kinds", JsonType, nullable=False),
        sa.Column("quiet_start", sa.String(length=5), nullable=True),
        sa.Column("quiet_end", sa.String(length=5), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        _at("updated_at"),
        sa.PrimaryKeyConstraint("user_id"),
    )
    op.create_table(
        "notification_routes",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("events", JsonType, nullable=False),
        sa.Column("workflow_id", sa.String(length=32), nullable=True),
        sa.Column("tool", sa.String(length=200), nullable=True),
        sa.Column("users", JsonType, nullable=False),
        sa.Column("endpoint_id", sa.String(length=32), nullable=True),
        sa.Column("escalate_after_s", sa.Float(), nullable=True),
        sa.Column("escalate_users", JsonType, nullable=False),
        sa.Column("escalate_endpoint_id", sa.String(length=32), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notification_routes_workspace_id", "notification_routes", ["workspace_id"])
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("events", JsonType, nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("failing", sa.Boolean(), nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _at("last_delivery_at", True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_endpoints_workspace_id", "webhook_endpoints", ["workspace_id"])
    op.create_table(
        "notification_escalations",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("approval_id", sa.String(length=32), nullable=False),
        sa.Column("route_id", sa.String(length=32), nullable=False),
        _at("due_at", True),
        _at("fired_at", True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("approval_id", "route_id", name="uq_notification_escalations_approval_route"),
    )
    op.create_index(
        "ix_notification_escalations_due",
        "notification_escalations",
        ["due_at"],
        sqlite_where=sa.text("due_at IS NOT NULL"),
        postgresql_where=sa.text("due_at IS NOT NULL"),
    )
    op.create_table(
        "notification_action_links",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("approval_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("outbox_id", sa.String(length=32), nullable=False),
        _at("expires_at"),
        _at("used_at", True),
        sa.Column("used_decision", sa.String(length=16), nullable=True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notification_action_links_approval_id", "notification_action_links", ["approval_id"])


def downgrade() -> None:
    op.drop_index("ix_notification_action_links_approval_id", table_name="notification_action_links")
    op.drop_table("notification_action_links")
    op.drop_index("ix_notification_escalations_due", table_name="notification_escalations")
    op.drop_table("notification_escalations")
    op.drop_index("ix_webhook_endpoints_workspace_id", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
    op.drop_index("ix_notification_routes_workspace_id", table_name="notification_routes")
    op.drop_table("notification_routes")
    op.drop_table("notification_prefs")
    op.drop_index("ix_notification_outbox_ws_recipient", table_name="notification_outbox")
    op.drop_index("ix_notification_outbox_due", table_name="notification_outbox")
    op.drop_table("notification_outbox")
