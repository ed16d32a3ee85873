"""0037 brings the regions (regions, region_scopes, suggestions.region_id/region_version) as the models say, and its
downgrade takes them away leaving the suggestions as they were (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from sqlalchemy import inspect, text

from services.db import Database
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables

T0 = "2026-12-03 07:00:00"


def test_0037_brings_the_regions_as_the_models_say_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, "regions", "region_scopes", "region_id", "region_version") == []
        with db.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO workspaces (id, slug, name, created_at) VALUES ('ws', 'ws', 'WS', :t)"), {"t": T0}
            )
            conn.execute(
                text(
                    'INSERT INTO regions (id, workspace_id, scope, scope_key, name, "when", "order", mode, '
                    "condition_version, created_at, updated_at) VALUES ('r1', 'ws', 'step', 'w/s', "
                    "'small', 'params.a < 1', 0, 'coaching', 1, :t, :t)"
                ),
                {"t": T0},
            )
        migrate(db, "0036", down=True)
        assert {"regions", "region_scopes"}.isdisjoint(tables(db))
        with db.engine.connect() as conn:
            columns = {c["name"] for c in inspect(conn).get_columns("suggestions")}
            assert "region_id" not in columns and "step_id" in columns
            assert conn.execute(text("SELECT slug FROM workspaces")).scalar() == "ws"
        migrate(db, "0037")
        assert {"regions", "region_scopes"} <= set(tables(db))
    finally:
        back_at_head(db, "workspace_review_floor", "regions", "workspaces")
