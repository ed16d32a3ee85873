"""step leases: executions.lease_owner and lease_expires_at, the lease of the instance running one of its steps

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 10:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("executions", sa.Column("lease_owner", sa.String(200), nullable=True))
    op.add_column("executions", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # in place (SQLite >= 3.35): a batch copy would trip over the rows that reference this table
    op.drop_column("executions", "lease_expires_at")
    op.drop_column("executions", "lease_owner")
