"""workspace_review_floor: a workspace's own floor for attentive reviews, the milliseconds under which an accept
counts as fast on the reviewers' figures (issue 41, item 6; core/coaching/attention.py). No row: the default,
1500 ms. The figures themselves are read from the decisions (their operator and latency_ms): no column for them.

Revision ID: 0038_attentive_floor
Revises: 0037_regions
Create Date: 2026-11-28 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0038_attentive_floor"
down_revision = "0037_regions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_review_floor",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("attentive_floor_ms", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.String(length=254), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("workspace_id"),
    )


def downgrade() -> None:
    op.drop_table("workspace_review_floor")
