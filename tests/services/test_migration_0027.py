"""0027 brings workspace_llm (a workspace's own LLM provider) as the model says, and its downgrade takes it away
leaving the workspaces as they were (SQLite, and PostgreSQL when it answers)."""
from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from services.db import Database
from services.migrate import alembic_config

T0 = "2026-11-27 22:00:00"


def migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def test_0027_brings_workspace_llm_as_the_model_says_and_takes_it_back(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from services.models import metadata

    db = Database(database_url)
    try:
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if "workspace_llm" in repr(d)] == []
        with db.engine.begin() as conn:
            conn.execute(text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"),
                         {"t": T0})
            conn.execute(text("INSERT INTO workspace_llm (workspace_id, base_url, model, api_key, updated_by, "
                              "updated_at) VALUES ('ws', 'http://h/v1', 'm', '', 'a@x', :t)"), {"t": T0})
        migrate(db, "0026", down=True)
        assert "workspace_llm" not in inspect(db.engine).get_table_names()
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT slug FROM workspaces")).scalar() == "ws"
        migrate(db, "head")
        assert "workspace_llm" in inspect(db.engine).get_table_names()
    finally:
        migrate(db, "head")
        with db.engine.begin() as conn:
            for table in ("workspace_llm", "workspaces"):
                conn.execute(text(f"DELETE FROM {table}"))
        db.dispose()
