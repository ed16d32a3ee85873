"""trigger_hooks, trigger_schedules, trigger_starts: starting workflows from outside, by signed webhooks and cron
schedules, each start recorded with its trigger (issue 33, item 4; services/triggers)

Revision ID: 0028_triggers
Revises: 0027
Create Date: 2026-11-28 00:30:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0028_triggers"
down_revision = "0027"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "trigger_hooks",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("workflow_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("mapping", JsonType, nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=True),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_trigger_hooks_workspace_id", "trigger_hooks", ["workspace_id"])
    op.create_index("ix_trigger_hooks_workflow_id", "trigger_hooks", ["workflow_id"])
    op.create_table(
        "trigger_schedules",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("workflow_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("cron", sa.String(length=200), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("variables", JsonType, nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("next_fire_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_fired_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_execution_id", sa.String(length=32), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_trigger_schedules_workspace_id", "trigger_schedules", ["workspace_id"])
    op.create_index("ix_trigger_schedules_workflow_id", "trigger_schedules", ["workflow_id"])
    op.create_index(
        "ix_trigger_schedules_due",
        "trigger_schedules",
        ["next_fire_at"],
        sqlite_where=sa.text("next_fire_at IS NOT NULL"),
        postgresql_where=sa.text("next_fire_at IS NOT NULL"),
    )
    op.create_table(
        "trigger_starts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("execution_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("hook_id", sa.String(length=32), nullable=True),
        sa.Column("delivery_id", sa.String(length=200), nullable=True),
        sa.Column("schedule_id", sa.String(length=32), nullable=True),
        sa.Column("fire_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["execution_id"], ["executions.id"]),
        sa.ForeignKeyConstraint(["hook_id"], ["trigger_hooks.id"]),
        sa.ForeignKeyConstraint(["schedule_id"], ["trigger_schedules.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("execution_id", name="uq_trigger_starts_execution"),
        sa.UniqueConstraint("hook_id", "delivery_id", name="uq_trigger_starts_delivery"),
        sa.UniqueConstraint("schedule_id", "fire_at", name="uq_trigger_starts_slot"),
    )


def downgrade() -> None:
    op.drop_table("trigger_starts")
    op.drop_index("ix_trigger_schedules_due", table_name="trigger_schedules")
    op.drop_index("ix_trigger_schedules_workflow_id", table_name="trigger_schedules")
    op.drop_index("ix_trigger_schedules_workspace_id", table_name="trigger_schedules")
    op.drop_table("trigger_schedules")
    op.drop_index("ix_trigger_hooks_workflow_id", table_name="trigger_hooks")
    op.drop_index("ix_trigger_hooks_workspace_id", table_name="trigger_hooks")
    op.drop_table("trigger_hooks")
