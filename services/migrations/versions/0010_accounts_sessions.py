"""accounts and sessions: a user's default workspace and session version, per-workspace member state,
invitations

- users.default_workspace_id: the workspace a request without X-Coach-Workspace acts in (the one the user was
  created in, or last chose at login). Before, it was "the oldest membership", so an admin of an older workspace
  who added the user moved where their requests landed. Existing users get the workspace they landed in until
  now (their oldest membership), so nothing changes for them.
- users.session_version: bumped by logout (and by an admin's revocation); a session cookie carries the version
  it was issued with and is refused once it differs, so a copied cookie dies with the logout.
- memberships.disabled / memberships.tokens_not_before: an admin disables a member, or revokes their bearer
  tokens, in their own workspace only (a user may belong to other workspaces, which must not be touched).
- invitations: adding a user to a workspace is an invitation they accept; nobody is captured by another tenant.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 21:20:00
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


# SQLite: plain ALTER TABLE ADD/DROP COLUMN (3.35+), never a batch rebuild: rebuilding `users` drops a table that
# memberships and tokens reference, which foreign_keys=ON refuses (and the pragma cannot change in a transaction).
# So on SQLite the default workspace column carries no FOREIGN KEY clause (a dropped column cannot be in one);
# PostgreSQL gets the constraint.
COLUMNS: tuple[tuple[str, sa.Column[Any]], ...] = (
    ("users", sa.Column("session_version", sa.Integer(), nullable=False, server_default="0")),
    ("memberships", sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false())),
    ("memberships", sa.Column("tokens_not_before", sa.DateTime(timezone=True), nullable=True)),
)


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def upgrade() -> None:
    op.add_column("users", sa.Column("default_workspace_id", sa.String(length=32), nullable=True))
    if not _sqlite():
        op.create_foreign_key("fk_users_default_workspace_id", "users", "workspaces", ["default_workspace_id"], ["id"])
    for table, column in COLUMNS:
        op.add_column(table, column)
    # where each existing user's requests landed until now: their oldest membership (workspace created first)
    op.execute(
        sa.text(
            "UPDATE users SET default_workspace_id = (SELECT m.workspace_id FROM memberships m "
            "JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = users.id "
            "ORDER BY w.created_at, w.slug LIMIT 1)"
        )
    )
    op.create_table(
        "invitations",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("invited_by", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.create_index("ix_invitations_email", ["email"], unique=False)
        batch_op.create_index("ix_invitations_workspace_id", ["workspace_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.drop_index("ix_invitations_workspace_id")
        batch_op.drop_index("ix_invitations_email")
    op.drop_table("invitations")
    if not _sqlite():
        op.drop_constraint("fk_users_default_workspace_id", "users", type_="foreignkey")
    for table, column in reversed((("users", sa.Column("default_workspace_id", sa.String(32))),) + COLUMNS):
        if _sqlite():
            op.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN {column.name}"))
        else:
            op.drop_column(table, column.name)
