"""Migration 0030_gateway_learning: the gateway tools' modes, as the model says, and back."""
from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from services.db import Database
from services.gateway.models import GatewayToolMode
from services.migrate import alembic_config
from services.models import metadata


def migrate(db: Database, revision: str, down: bool = False) -> None:
    cfg = alembic_config(db.url)
    with db.engine.connect() as conn:
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)
        conn.commit()


def test_gateway_tool_modes_come_as_the_model_says_and_go_with_the_downgrade(database_url):
    assert GatewayToolMode.__table__ in metadata.sorted_tables
    db = Database(database_url)
    try:
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert [d for d in diffs if "gateway_tool_modes" in repr(d) or "gateway_correction_packs" in repr(d)] == []
        migrate(db, "0030_gateway_learning", down=False)
        migrate(db, "0029_notifications", down=True)
        assert {"gateway_tool_modes", "gateway_correction_packs"}.isdisjoint(inspect(db.engine).get_table_names())
    finally:
        migrate(db, "head")  # leave the schema at head for the tests that follow
        db.dispose()
    db = Database(database_url)
    try:
        assert "gateway_tool_modes" in inspect(db.engine).get_table_names()
    finally:
        db.dispose()
