"""decisions: one B-tree for a decision, keyed by its suggestion, and the Idempotency-Key index only for
keyed decisions; the `metrics` counter becomes `writes`

Every decision inserts a decisions row, and each B-tree it lands in is one more page the commit writes to the
WAL (a decision's commit wrote about 17 pages; this table took 4.5 of them: the rowid table, its id index,
the unique suggestion_id and the unique Idempotency-Key). A decision is found by its suggestion (exactly one
per suggestion) or by its Idempotency-Key, never by its own id: the primary key becomes suggestion_id, which
also enforces "exactly one", and `id` stays a plain column (the decision_id answers carry). On SQLite the
table is rebuilt WITHOUT ROWID, so the row lives in that key's B-tree. The unique (workspace_id,
idempotency_key) constraint becomes a partial unique index over the rows that have a key: most decisions carry
none, and no longer cost that index anything. The replay lookup (workspace_id = ? AND idempotency_key = ?)
implies a key, so it still uses the index on both databases.

The counter 0007 added as `metrics` now counts every write transaction (services.db.Kept): renamed `writes`.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 02:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

KEYED = sa.text("idempotency_key IS NOT NULL")
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
# PostgreSQL's names for 0002's unnamed constraints
PG_UNIQUE, PG_ONE_PER_SUGGESTION, PG_KEY = (
    "decisions_workspace_id_idempotency_key_key",
    "decisions_suggestion_id_key",
    "decisions_pkey",
)


def _decisions(*constraints) -> sa.Table:
    """The decisions table's columns and foreign keys as 0002 made them, with these keys and constraints."""
    return sa.Table(
        "decisions",
        sa.MetaData(),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("suggestion_id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("execution_id", sa.String(length=32), nullable=False),
        sa.Column("workflow_id", sa.String(length=32), nullable=False),
        sa.Column("step_id", sa.String(length=64), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("correction", JSON, nullable=True),
        sa.Column("manual_output", JSON, nullable=True),
        sa.Column("feedback", sa.Text(), nullable=True),
        sa.Column("operator", sa.String(length=200), nullable=False),
        sa.Column("latency_ms", sa.Double(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("response", JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["execution_id"],
            ["executions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["suggestion_id"],
            ["suggestions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
        ),
        *constraints,
    )


BEFORE = (
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("suggestion_id"),
    sa.UniqueConstraint("workspace_id", "idempotency_key"),
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table(
            "decisions",
            recreate="always",
            copy_from=_decisions(sa.PrimaryKeyConstraint("suggestion_id")),
            table_kwargs={"sqlite_with_rowid": False},
        ):
            pass
    else:
        op.drop_constraint(PG_UNIQUE, "decisions", type_="unique")
        op.drop_constraint(PG_KEY, "decisions", type_="primary")
        op.drop_constraint(PG_ONE_PER_SUGGESTION, "decisions", type_="unique")
        op.create_primary_key(PG_KEY, "decisions", ["suggestion_id"])
    op.create_index(
        "ux_decisions_idempotency_key",
        "decisions",
        ["workspace_id", "idempotency_key"],
        unique=True,
        sqlite_where=KEYED,
        postgresql_where=KEYED,
    )
    op.execute("UPDATE counters SET name = 'writes' WHERE name = 'metrics'")


def downgrade() -> None:
    op.execute("UPDATE counters SET name = 'metrics' WHERE name = 'writes'")
    op.drop_index("ux_decisions_idempotency_key", table_name="decisions")
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("decisions", recreate="always", copy_from=_decisions(*BEFORE)):
            pass
    else:
        op.drop_constraint(PG_KEY, "decisions", type_="primary")
        op.create_primary_key(PG_KEY, "decisions", ["id"])
        op.create_unique_constraint(PG_ONE_PER_SUGGESTION, "decisions", ["suggestion_id"])
        op.create_unique_constraint(PG_UNIQUE, "decisions", ["workspace_id", "idempotency_key"])
