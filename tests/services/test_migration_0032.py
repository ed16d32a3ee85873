"""0032_web_push brings the push tables and a person's push switches as the models say, keeps people's notification
settings across its downgrade and upgrade (SQLite, and PostgreSQL when it answers)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text

from services.db import Database
from tests.support.migrations import back_at_head, columns, differences_from_models, migrate, tables

TABLES = {"push_subscriptions", "push_vapid_keys"}


def test_0032_brings_web_push_as_the_models_say_and_takes_it_back_keeping_the_settings(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, *TABLES, "notification_prefs") == []
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO notification_prefs (user_id, email, kinds, timezone, updated_at, push, "
                    "push_kinds) VALUES ('u1', false, '{}', 'Europe/Berlin', :t, false, '{}')"
                ),
                {"t": datetime(2026, 11, 28, tzinfo=UTC)},
            )
        migrate(db, "0031_slack", down=True)
        assert not TABLES & tables(db)
        assert "push" not in columns(db, "notification_prefs")
        migrate(db, "head")
        assert TABLES <= tables(db)
        with db.engine.connect() as conn:  # the person's settings kept; push on, as for everyone before 0032
            row = conn.execute(text("SELECT email, timezone, push FROM notification_prefs")).one()
        assert (bool(row.email), row.timezone, bool(row.push)) == (False, "Europe/Berlin", True)
    finally:
        back_at_head(db, "notification_prefs")
