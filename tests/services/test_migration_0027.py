"""0027 brings workspace_llm (a workspace's own LLM provider) as the model says, and its downgrade takes it away
leaving the workspaces as they were (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables

T0 = "2026-11-27 22:00:00"


def test_0027_brings_workspace_llm_as_the_model_says_and_takes_it_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, "workspace_llm") == []
        with db.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": T0}
            )
            conn.execute(
                text(
                    "INSERT INTO workspace_llm (workspace_id, base_url, model, api_key, updated_by, "
                    "updated_at) VALUES ('ws', 'http://h/v1', 'm', '', 'a@x', :t)"
                ),
                {"t": T0},
            )
        migrate(db, "0026", down=True)
        assert "workspace_llm" not in tables(db)
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT slug FROM workspaces")).scalar() == "ws"
        migrate(db, "head")
        assert "workspace_llm" in tables(db)
    finally:
        back_at_head(db, "workspace_llm", "workspaces")
