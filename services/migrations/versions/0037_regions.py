"""regions: named conditions over a tool scope's calls with their own mode and evidence (issue 41,
docs/autonomy.md#regions).

`regions` holds each region (its scope: a workflow's step or a gateway tool; name, condition, order, mode, the
condition version its evidence counts under); `region_scopes` each scope's counter of condition versions (never
reused). suggestions gain `region_id` and `region_version`: the region a suggested call fell in when it was asked,
so that its decision counts for that region's evidence (only while the region's condition is still that version).

Revision ID: 0037_regions
Revises: 0036_slack_message_updates
Create Date: 2026-12-03 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0037_regions"
down_revision = "0036_slack_message_updates"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "regions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("scope_key", sa.String(length=300), nullable=False),
        sa.Column("workflow_id", sa.String(length=32), nullable=True),
        sa.Column("step_id", sa.String(length=200), nullable=True),
        sa.Column("tool", sa.String(length=200), nullable=True),
        sa.Column("identity", sa.String(length=200), nullable=True),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("when", sa.Text(), nullable=False),
        sa.Column("order", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("condition_version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_regions_scope", "regions", ["workspace_id", "scope", "scope_key"], unique=False)
    op.create_table(
        "region_scopes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("scope_key", sa.String(length=300), nullable=False),
        sa.Column("versions", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "scope", "scope_key", name="uq_region_scopes_scope"),
    )
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("region_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("region_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    # in place on both databases (SQLite 3.35+ drops a plain column): batch mode would copy suggestions, which other
    # rows refer to, and SQLite refuses that rebuild under its foreign keys
    op.execute("ALTER TABLE suggestions DROP COLUMN region_version")
    op.execute("ALTER TABLE suggestions DROP COLUMN region_id")
    op.drop_table("region_scopes")
    op.drop_index("ix_regions_scope", table_name="regions")
    op.drop_table("regions")
