"""policy_fallback: a policy rule may `confirm` a gateway call with the person at the agent (issue 42, item 2;
services/gateway/confirm.py); its `fallback` (require_review | deny) is what applies when nobody at the agent can be
asked (a client without elicitation, a workflow's call). NULL for every other effect.

Revision ID: 0040_policy_fallback
Revises: 0039_check_suggestions
Create Date: 2026-12-03 11:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0040_policy_fallback"
down_revision = "0039_check_suggestions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fallback", sa.String(length=16), nullable=True))


def downgrade() -> None:
    # a confirm rule cannot be kept without its fallback: it becomes what it fell back to
    op.execute("UPDATE policies SET effect = COALESCE(fallback, 'require_review') WHERE effect = 'confirm'")
    op.execute("ALTER TABLE policies DROP COLUMN fallback")
