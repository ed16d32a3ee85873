"""slack_message_updates: where a Slack review message went, so that it can be updated once decided anywhere, and a
route's own Slack channel (issue 33).

notification_outbox gains `approval_id` (the approval a row is about: its Slack messages are found by it),
`slack_channel` and `slack_ts` (chat.postMessage's answer: the channel id and the message's ts, which chat.update
needs). notification_routes gains `slack_channel` (a channel id or a #name: the route's reviews go there instead of
the Slack app's default channel).

Revision ID: 0036_slack_message_updates
Revises: 0035_gateway_builtins
Create Date: 2026-11-28 07:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0036_slack_message_updates"
down_revision = "0035_gateway_builtins"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notification_outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("approval_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("slack_channel", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("slack_ts", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_notification_outbox_approval", ["approval_id", "channel"], unique=False)
    with op.batch_alter_table("notification_routes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("slack_channel", sa.String(length=81), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notification_routes", schema=None) as batch_op:
        batch_op.drop_column("slack_channel")
    with op.batch_alter_table("notification_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_notification_outbox_approval")
        batch_op.drop_column("slack_ts")
        batch_op.drop_column("slack_channel")
        batch_op.drop_column("approval_id")
