"""The write counter and its SQLite triggers go: no process keeps rows between transactions any more

0007 added the `counters` table (its one row, `writes` since 0009), and 0020 and 0022 added triggers that bump it
on every write to the tables whose rows a SQLite server process kept in memory between its write transactions
(services.db.Kept, now removed). Each transaction reads what it needs again; the identity map of its Session is
the only cache. The triggers cost a write to the counter row with every row written, so they go, and the table
with them. The downgrade puts both back (the counter at 0: a process of that version then reads everything once).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27 18:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

# 0020's tables and 0022's
TABLES = (
    "executions",
    "suggestions",
    "workflows",
    "metric_scopes",
    "metric_buckets",
    "audit_events",
    "policy_settings",
)
OPERATIONS = ("INSERT", "UPDATE", "DELETE")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table in TABLES:
            for operation in OPERATIONS:
                op.execute(f"DROP TRIGGER IF EXISTS counted_{operation.lower()}_{table}")
    op.drop_table("counters")


def downgrade() -> None:
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.bulk_insert(counters, [{"name": "writes", "value": 0}])
    if op.get_bind().dialect.name == "sqlite":
        for table in TABLES:
            for operation in OPERATIONS:
                op.execute(
                    f"CREATE TRIGGER IF NOT EXISTS counted_{operation.lower()}_{table} AFTER {operation} "
                    f"ON {table} BEGIN UPDATE counters SET value = value + 1 WHERE name = 'writes'; END"
                )
