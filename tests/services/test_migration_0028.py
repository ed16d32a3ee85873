"""0028 brings trigger_hooks, trigger_schedules and trigger_starts as the models say, and its downgrade takes them
away leaving the workflows as they were (SQLite, and PostgreSQL when it answers)."""
from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from services.db import Database
from services.migrate import alembic_config

T0 = "2026-11-28 00:30:00"
TABLES = ("trigger_hooks", "trigger_schedules", "trigger_starts")


def migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def test_0028_brings_the_trigger_tables_as_the_models_say_and_takes_them_back(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from services.models import metadata

    db = Database(database_url)
    try:
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if any(t in repr(d) for t in TABLES)] == []
        with db.engine.begin() as conn:
            conn.execute(text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"),
                         {"t": T0})
            conn.execute(text("INSERT INTO workflows (id, workspace_id, name, description, current_version, mode, "
                              "settings, created_at, updated_at, kind, packs_revision) VALUES ('wf', 'ws', 'wf', '', "
                              "1, 'coaching', '{}', :t, :t, 'workflow', 0)"), {"t": T0})
            conn.execute(text("INSERT INTO trigger_hooks (id, workspace_id, workflow_id, name, secret, mapping, "
                              "created_by, created_at) VALUES ('h', 'ws', 'wf', 'h', 'sealed', '{}', 'a@x', :t)"),
                         {"t": T0})
        migrate(db, "0027", down=True)
        assert not set(TABLES) & set(inspect(db.engine).get_table_names())
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT name FROM workflows")).scalar() == "wf"
        migrate(db, "head")
        assert set(TABLES) <= set(inspect(db.engine).get_table_names())
    finally:
        migrate(db, "head")
        with db.engine.begin() as conn:
            for table in (*TABLES, "workflows", "workspaces"):
                conn.execute(text(f"DELETE FROM {table}"))
        db.dispose()
