"""0032_web_push brings the push tables and a person's push switches as the models say, keeps people's notification
settings across its downgrade and upgrade (SQLite, and PostgreSQL when it answers)."""
from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import inspect, text

from services.db import Database
from tests.services.test_migration_0029 import migrate

TABLES = {"push_subscriptions", "push_vapid_keys"}


def test_0032_brings_web_push_as_the_models_say_and_takes_it_back_keeping_the_settings(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from services.models import metadata

    db = Database(database_url)
    try:
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if any(t in repr(d) for t in TABLES | {"notification_prefs"})] == []
        with db.engine.begin() as conn:
            conn.execute(text("INSERT INTO notification_prefs (user_id, email, kinds, timezone, updated_at, push, "
                              "push_kinds) VALUES ('u1', false, '{}', 'Europe/Berlin', :t, false, '{}')"),
                         {"t": datetime(2026, 11, 28, tzinfo=timezone.utc)})
        migrate(db, "0031_slack", down=True)
        assert not TABLES & set(inspect(db.engine).get_table_names())
        assert "push" not in {c["name"] for c in inspect(db.engine).get_columns("notification_prefs")}
        migrate(db, "head")
        assert TABLES <= set(inspect(db.engine).get_table_names())
        with db.engine.connect() as conn:  # the person's settings kept; push on, as for everyone before 0032
            row = conn.execute(text("SELECT email, timezone, push FROM notification_prefs")).one()
        assert (bool(row.email), row.timezone, bool(row.push)) == (False, "Europe/Berlin", True)
    finally:
        with db.engine.begin() as conn:
            conn.execute(text("DELETE FROM notification_prefs"))
        migrate(db, "head")
        db.dispose()
