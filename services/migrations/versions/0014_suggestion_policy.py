"""suggestions.policy: the policy's verdict on a suggested call, with its explanation, shown in the panel

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 01:10:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("suggestions", sa.Column("policy", JsonType, nullable=True))


def downgrade() -> None:
    # in place (SQLite >= 3.35): a batch copy of suggestions would trip over the rows that reference it
    op.drop_column("suggestions", "policy")
