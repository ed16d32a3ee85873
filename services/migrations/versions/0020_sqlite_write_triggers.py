"""SQLite: the database itself counts writes to the rows a server process keeps between transactions

A SQLite server process keeps some rows in memory between its write transactions (services.db.Kept: metric rows,
each workspace's audit head, the execution awaiting a decision with its suggestion and workflow) and reads none of
them while the `writes` counter is where it left it. Until now every writer had to bump that counter itself; a
write that did not (the sqlite3 shell, another tool) went unseen. These triggers bump it on every row inserted,
changed or deleted in those tables, whoever writes. PostgreSQL keeps nothing between transactions: no triggers.

Revision ID: 0020
Revises: 0018
Create Date: 2026-11-24 03:30:00
"""

from alembic import op

revision = "0020"
down_revision = "0018"
branch_labels = None
depends_on = None

# the tables whose rows services.db.Kept holds (services.metrics, services.audit, services.executions)
TABLES = ("executions", "suggestions", "workflows", "metric_scopes", "metric_buckets", "audit_events")
OPERATIONS = ("INSERT", "UPDATE", "DELETE")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        for operation in OPERATIONS:
            op.execute(
                f"CREATE TRIGGER IF NOT EXISTS counted_{operation.lower()}_{table} AFTER {operation} ON {table} "
                "BEGIN UPDATE counters SET value = value + 1 WHERE name = 'writes'; END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        for operation in OPERATIONS:
            op.execute(f"DROP TRIGGER IF EXISTS counted_{operation.lower()}_{table}")
