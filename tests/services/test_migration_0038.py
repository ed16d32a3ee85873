"""0038 brings workspace_review_floor (a workspace's own floor for attentive reviews) as the model says, and its
downgrade takes it away leaving the workspaces as they were (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables

T0 = "2026-11-28 09:00:00"


def test_0038_brings_workspace_review_floor_as_the_model_says_and_takes_it_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, "workspace_review_floor") == []
        with db.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": T0}
            )
            conn.execute(
                text(
                    "INSERT INTO workspace_review_floor (workspace_id, attentive_floor_ms, updated_by, "
                    "updated_at) VALUES ('ws', 2000, 'a@x', :t)"
                ),
                {"t": T0},
            )
        migrate(db, "0037", down=True)
        assert "workspace_review_floor" not in tables(db)
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT slug FROM workspaces")).scalar() == "ws"
        migrate(db, "head")
        assert "workspace_review_floor" in tables(db)
    finally:
        back_at_head(db, "workspace_review_floor", "workspaces")
