"""0029_notifications brings the notification tables as the models say, and its downgrade takes them away (SQLite,
and PostgreSQL when it answers)."""

from __future__ import annotations

from services.db import Database
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables

TABLES = {
    "notification_outbox",
    "notification_prefs",
    "notification_routes",
    "webhook_endpoints",
    "notification_escalations",
    "notification_action_links",
}


def test_0029_brings_the_notification_tables_as_the_models_say_and_takes_them_back(database_url):
    db = Database(database_url)
    try:
        assert differences_from_models(db, *TABLES) == []
        migrate(db, "0028_triggers", down=True)
        assert not TABLES & tables(db)
        migrate(db, "head")
        assert TABLES <= tables(db)
    finally:
        back_at_head(db)
