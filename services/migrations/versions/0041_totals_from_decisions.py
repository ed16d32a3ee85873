"""totals_from_decisions: the workspace's and the operators' totals are counted from the decisions when read
(services/metrics/totals.py, issue 43 item 7): no decision writes a `global` or an `operator` metric row any more, so
those rows go. A decision held for its undo window counts once released: the totals leave out those whose suggestion
is still `held`, found through a partial index that holds those few only (a suggestion enters it when its decision is
held and leaves it when it is released or taken back).

The downgrade takes the index away; the rows cannot come back (the code before counts those scopes from zero again).

Revision ID: 0041_totals_from_decisions
Revises: 0040_policy_fallback
Create Date: 2026-12-07 15:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0041_totals_from_decisions"
down_revision = "0040_policy_fallback"
branch_labels = None
depends_on = None

HELD = sa.text("status = 'held'")


def upgrade() -> None:
    op.execute("DELETE FROM metric_scopes WHERE scope IN ('global', 'operator')")
    op.create_index(
        "ix_suggestions_held",
        "suggestions",
        ["workspace_id"],
        unique=False,
        sqlite_where=HELD,
        postgresql_where=HELD,
    )


def downgrade() -> None:
    op.drop_index("ix_suggestions_held", table_name="suggestions")
