"""SQLite: writes to policy_settings are counted too, so a process keeps each workspace's policy revision

The policy revision (policy_settings.revision, bumped by every change of a workspace's rules or defaults) was read
once per transaction: one SELECT in every decision. With these triggers any write to policy_settings, whoever makes
it, bumps the `writes` counter like the tables of 0020, so a process keeps the revision it read (services.db.Kept)
and reads it again only after someone else wrote. PostgreSQL keeps nothing between transactions: no triggers.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-24 07:00:00
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

TABLE = "policy_settings"
OPERATIONS = ("INSERT", "UPDATE", "DELETE")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for operation in OPERATIONS:
        op.execute(
            f"CREATE TRIGGER IF NOT EXISTS counted_{operation.lower()}_{TABLE} AFTER {operation} ON {TABLE} "
            "BEGIN UPDATE counters SET value = value + 1 WHERE name = 'writes'; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for operation in OPERATIONS:
        op.execute(f"DROP TRIGGER IF EXISTS counted_{operation.lower()}_{TABLE}")
