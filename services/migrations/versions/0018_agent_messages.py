"""agent steps: agent_messages (the conversations), suggestions.kind and agent_message_id (tool-call suggestions),
correction_packs.step_id widened for `<agent step>:<tool>` packs

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 10:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    op.create_table(
        "agent_messages",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("workspace_id", sa.String(32), sa.ForeignKey("workspaces.id"), nullable=False),
        sa.Column("execution_id", sa.String(32), sa.ForeignKey("executions.id"), nullable=False),
        sa.Column("step_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text(), nullable=True),
        sa.Column("data", json_type, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("execution_id", "step_id", "seq", name="uq_agent_messages_seq"),
    )
    op.add_column("suggestions", sa.Column("kind", sa.String(16), nullable=False, server_default="step"))
    op.add_column("suggestions", sa.Column("agent_message_id", sa.String(32), nullable=True))
    op.add_column("suggestions", sa.Column("tool_call_id", sa.String(200), nullable=True))
    if op.get_bind().dialect.name == "postgresql":  # SQLite does not enforce a VARCHAR's length
        op.alter_column(
            "correction_packs", "step_id", type_=sa.String(200), existing_type=sa.String(64), existing_nullable=False
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "correction_packs", "step_id", type_=sa.String(64), existing_type=sa.String(200), existing_nullable=False
        )
    op.drop_column("suggestions", "tool_call_id")
    op.drop_column("suggestions", "agent_message_id")
    op.drop_column("suggestions", "kind")
    op.drop_table("agent_messages")
