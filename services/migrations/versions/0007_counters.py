"""counters: named numbers that processes sharing the database bump; first `metrics`

Every transaction that changes metric rows bumps `metrics`. A SQLite server process keeps the metric rows it
last wrote in memory and reads none while the number it sees is the one it left (services/metrics.py).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 00:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.bulk_insert(counters, [{"name": "metrics", "value": 0}])


def downgrade() -> None:
    op.drop_table("counters")
