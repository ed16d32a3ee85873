"""0029_notifications brings the notification tables as the models say, and its downgrade takes them away (SQLite,
and PostgreSQL when it answers)."""
from __future__ import annotations

from alembic import command
from sqlalchemy import inspect

from services.db import Database
from services.migrate import alembic_config

TABLES = {"notification_outbox", "notification_prefs", "notification_routes", "webhook_endpoints",
          "notification_escalations", "notification_action_links"}


def migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def test_0029_brings_the_notification_tables_as_the_models_say_and_takes_them_back(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from services.models import metadata

    db = Database(database_url)
    try:
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if any(t in repr(d) for t in TABLES)] == []
        migrate(db, "0028_triggers", down=True)
        assert not TABLES & set(inspect(db.engine).get_table_names())
        migrate(db, "head")
        assert TABLES <= set(inspect(db.engine).get_table_names())
    finally:
        migrate(db, "head")
        db.dispose()
