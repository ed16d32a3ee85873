"""What the migration tests (tests/services/test_migration*.py) share: a database moved to a revision, its tables and
columns, its differences from the models, the rows most tests start from, and the end of every test: the rows it
wrote gone and the schema back at head for the tests that follow (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from services.db import Database
from services.migrate import alembic_config

T0 = "2024-05-01 10:00:00"


def migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def tables(db: Database) -> set[str]:
    return set(inspect(db.engine).get_table_names())


def columns(db: Database, table: str) -> set[str]:
    return {c["name"] for c in inspect(db.engine).get_columns(table)}


def differences_from_models(db: Database, *names: str) -> list:
    """The differences between the database and the models (alembic's autogenerate) that name any of `names`."""
    from services.models import metadata

    with db.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    return [d for d in diffs if any(name in repr(d) for name in names)]


def workspace_and_workflow(conn, at: str = T0) -> None:
    """Workspace `ws` and its workflow `wf`, as rows of any schema revision since 0001."""
    conn.execute(text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": at})
    conn.execute(
        text(
            "INSERT INTO workflows (id, workspace_id, name, description, current_version, mode, "
            "settings, created_at, updated_at) VALUES ('wf', 'ws', 'wf', '', 1, 'coaching', "
            "'{}', :t, :t)"
        ),
        {"t": at},
    )


def back_at_head(db: Database, *emptied: str) -> None:
    """The rows of the `emptied` tables (children first) deleted where the table exists at the present revision,
    the schema upgraded to head, and the database let go."""
    with db.engine.begin() as conn:
        present = set(inspect(conn).get_table_names())
        for table in emptied:
            if table in present:
                conn.execute(text(f"DELETE FROM {table}"))
    migrate(db, "head")
    db.dispose()
