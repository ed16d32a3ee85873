"""The MCP gateway: agent identities (bearer tokens, hashed), gateway calls (a held call survives a restart), and
approvals that belong to no execution (kind `gateway`, with the calling agent's name)

approvals.execution_id becomes nullable: a gateway call's review is an approval of the workspace, not of a run. On
SQLite the column's change is a batch copy of the table; its partial index (ix_approvals_due) is dropped before and
made again after, so the copy cannot lose its WHERE clause.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-27 21:30:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "agent_identities",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash", name="uq_agent_identities_token_hash"),
    )
    op.create_index("ix_agent_identities_workspace_id", "agent_identities", ["workspace_id"])
    op.create_table(
        "gateway_calls",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("agent_name", sa.String(length=100), nullable=False),
        sa.Column("tool", sa.String(length=128), nullable=False),
        sa.Column("arguments", JsonType, nullable=False),
        sa.Column("call_key", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("approval_id", sa.String(length=32), nullable=True),
        sa.Column("policy", JsonType, nullable=True),
        sa.Column("result", JsonType, nullable=True),
        sa.Column("result_bytes", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("forwarded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("row_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["agent_id"], ["agent_identities.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_gateway_calls_key", "gateway_calls", ["agent_id", "call_key", "delivered_at"])
    op.create_index("ix_gateway_calls_approval_id", "gateway_calls", ["approval_id"])
    op.drop_index("ix_approvals_due", table_name="approvals")
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.alter_column("execution_id", existing_type=sa.String(length=32), nullable=True)
        batch_op.add_column(sa.Column("agent", sa.String(length=100), nullable=True))
    op.create_index(
        "ix_approvals_due",
        "approvals",
        ["due_at"],
        sqlite_where=sa.text("due_at IS NOT NULL"),
        postgresql_where=sa.text("due_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.execute("DELETE FROM approvals WHERE execution_id IS NULL")
    op.drop_index("ix_approvals_due", table_name="approvals")
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_column("agent")
        batch_op.alter_column("execution_id", existing_type=sa.String(length=32), nullable=False)
    op.create_index(
        "ix_approvals_due",
        "approvals",
        ["due_at"],
        sqlite_where=sa.text("due_at IS NOT NULL"),
        postgresql_where=sa.text("due_at IS NOT NULL"),
    )
    op.drop_index("ix_gateway_calls_approval_id", table_name="gateway_calls")
    op.drop_index("ix_gateway_calls_key", table_name="gateway_calls")
    op.drop_table("gateway_calls")
    op.drop_index("ix_agent_identities_workspace_id", table_name="agent_identities")
    op.drop_table("agent_identities")
