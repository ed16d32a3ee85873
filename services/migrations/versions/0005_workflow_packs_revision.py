"""workflows.packs_revision: bumped with every correction-pack change of the workflow

Every process caches a workflow's learned rules under this number (services/corrections.py), so a suggestion
reads no correction_packs row unless a pack changed since, here or in another server process.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 21:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("workflows", sa.Column("packs_revision", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    # in place (SQLite >= 3.35): a batch copy of workflows would trip over the rows that reference it
    op.drop_column("workflows", "packs_revision")
