"""0039 brings the check and evidence settings (workspace_review_floor), suggestions.check_change and
decisions.evidence as the models say, keeps a workspace's floor through its downgrade and takes back a row that held
only the new settings (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, columns, differences_from_models, migrate

T0 = "2026-11-28 11:00:00"
NEW = {"check_rate", "evidence_from", "min_checks", "min_catch_rate", "max_fast_share"}


def test_0039_brings_the_check_settings_as_the_model_says_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, "workspace_review_floor", "check_change", "'evidence'") == []
        with db.engine.begin() as conn:
            for ws in ("ws", "ws2"):
                conn.execute(
                    text("INSERT INTO workspaces (id, slug, name, created_at) VALUES (:w, :w, 'WS', :t)"),
                    {"w": ws, "t": T0},
                )
            conn.execute(
                text(
                    "INSERT INTO workspace_review_floor (workspace_id, attentive_floor_ms, check_rate, "
                    "updated_by, updated_at) VALUES ('ws', 2000, 0.1, 'a@x', :t)"
                ),
                {"t": T0},
            )
            # a row with the new settings only: its floor is the default (NULL)
            conn.execute(
                text(
                    "INSERT INTO workspace_review_floor (workspace_id, attentive_floor_ms, evidence_from, "
                    "updated_by, updated_at) VALUES ('ws2', NULL, 'attentive', 'a@x', :t)"
                ),
                {"t": T0},
            )
        migrate(db, "0038", down=True)
        assert not NEW & columns(db, "workspace_review_floor")
        assert "check_change" not in columns(db, "suggestions") and "evidence" not in columns(db, "decisions")
        with db.engine.connect() as conn:
            assert conn.execute(text("SELECT workspace_id, attentive_floor_ms FROM workspace_review_floor")).all() == [
                ("ws", 2000)
            ]
        migrate(db, "head")
        assert NEW <= columns(db, "workspace_review_floor")
        assert "check_change" in columns(db, "suggestions") and "evidence" in columns(db, "decisions")
    finally:
        back_at_head(db, "workspace_review_floor", "workspaces")
