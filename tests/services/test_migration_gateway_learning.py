"""Migration 0030_gateway_learning: the gateway tools' modes, as the model says, and back."""

from __future__ import annotations

from services.db import Database
from services.models import metadata
from services.models.gateway import GatewayToolMode
from tests.support.migrations import back_at_head, differences_from_models, migrate, tables


def test_gateway_tool_modes_come_as_the_model_says_and_go_with_the_downgrade(database_url):
    assert GatewayToolMode.__table__ in metadata.sorted_tables
    db = Database(database_url)
    try:
        assert differences_from_models(db, "gateway_tool_modes", "gateway_correction_packs") == []
        migrate(db, "0030_gateway_learning", down=False)
        migrate(db, "0029_notifications", down=True)
        assert {"gateway_tool_modes", "gateway_correction_packs"}.isdisjoint(tables(db))
    finally:
        back_at_head(db)  # leave the schema at head for the tests that follow
    db = Database(database_url)
    try:
        assert "gateway_tool_modes" in tables(db)
    finally:
        db.dispose()
