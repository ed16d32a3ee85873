"""0028 brings trigger_hooks, trigger_schedules and trigger_starts as the models say, and its downgrade takes them
away leaving the workflows as they were (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables, workspace_and_workflow

T0 = "2026-11-28 00:30:00"
TABLES = ("trigger_hooks", "trigger_schedules", "trigger_starts")


def test_0028_brings_the_trigger_tables_as_the_models_say_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, *TABLES) == []
        with db.engine.begin() as conn:
            workspace_and_workflow(conn, T0)
            conn.execute(
                text(
                    "INSERT INTO trigger_hooks (id, workspace_id, workflow_id, name, secret, mapping, "
                    "created_by, created_at) VALUES ('h', 'ws', 'wf', 'h', 'sealed', '{}', 'a@x', :t)"
                ),
                {"t": T0},
            )
        migrate(db, "0027", down=True)
        assert not set(TABLES) & tables(db)
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT name FROM workflows")).scalar() == "wf"
        migrate(db, "head")
        assert set(TABLES) <= tables(db)
    finally:
        back_at_head(db, *TABLES, "workflows", "workspaces")
