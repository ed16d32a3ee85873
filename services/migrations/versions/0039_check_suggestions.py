"""check_suggestions: check suggestions and evidence from attentive operators (issue 41, item 6;
core/coaching/checks.py).

workspace_review_floor, the workspace's settings for attentive reviews, gains `check_rate`, `evidence_from`,
`min_checks`, `min_catch_rate` and `max_fast_share` (NULL: the default), and its `attentive_floor_ms` may be NULL (the
default floor) now that a row may hold only the other settings. suggestions gain `check_change`: what a check
changed (the param, the value shown, the real value), never shown with the suggestion; NULL on every other one.
decisions gain `evidence`: whether the decision went into the readiness tests, judged when it counted (attentive,
counted, left_out; NULL: not judged). A check's decision is marked in `outcome` (check_miss, check_catch,
check_none). The operators' check outcomes are metric scopes (`check`, `fast`): no column for them.

Revision ID: 0039_check_suggestions
Revises: 0038_attentive_floor
Create Date: 2026-11-28 11:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0039_check_suggestions"
down_revision = "0038_attentive_floor"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("workspace_review_floor", schema=None) as batch_op:
        batch_op.alter_column("attentive_floor_ms", existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(sa.Column("check_rate", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("evidence_from", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("min_checks", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("min_catch_rate", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("max_fast_share", sa.Float(), nullable=True))
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("check_change", JSON, nullable=True))
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("evidence", sa.String(length=16), nullable=True))


def downgrade() -> None:
    # in place on both databases (SQLite 3.35+ drops a plain column): copying suggestions or decisions, which other
    # rows refer to, is what batch mode would do on SQLite, and decisions keeps its WITHOUT ROWID form (0009)
    op.execute("ALTER TABLE decisions DROP COLUMN evidence")
    op.execute("ALTER TABLE suggestions DROP COLUMN check_change")
    # a row that held only the new settings has no floor to keep
    op.execute("DELETE FROM workspace_review_floor WHERE attentive_floor_ms IS NULL")
    with op.batch_alter_table("workspace_review_floor", schema=None) as batch_op:
        batch_op.drop_column("max_fast_share")
        batch_op.drop_column("min_catch_rate")
        batch_op.drop_column("min_checks")
        batch_op.drop_column("evidence_from")
        batch_op.drop_column("check_rate")
        batch_op.alter_column("attentive_floor_ms", existing_type=sa.Integer(), nullable=False)
