"""UTC datetimes on SQLite: written as the dialect's storage format (services.models._SqliteUtcDateTime makes the
text in one step), read back aware."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from services.workflows import service as workflows

WORKFLOW = {"name": "dated", "steps": [{"id": "a", "tool": "echo", "params": {"message": "a"}}]}


def test_sqlite_stores_datetimes_as_sqlalchemys_text_in_utc(services, database_url):
    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite's text form")
    moment = datetime(2026, 3, 4, 17, 6, 7, tzinfo=timezone(timedelta(hours=5)))  # 12:06:07 UTC, no microseconds
    with services.db.transaction() as tx:
        wf = workflows.create(tx, services.tools, services.default_workspace_id(), WORKFLOW)
        held_wf = tx.get(type(wf), wf.id)
        held_wf.created_at = moment
    with services.db.read() as tx:
        stored = tx.execute(text("SELECT created_at FROM workflows WHERE id = :id"), {"id": wf.id}).scalar_one()
        assert stored == "2026-03-04 12:06:07.000000"  # the dialect's storage format: microseconds always written
        found = tx.get(type(wf), wf.id)
        assert found.created_at == moment and found.created_at.tzinfo is not None


def test_the_text_is_what_sqlalchemys_own_processor_writes():
    from sqlalchemy.dialects import sqlite

    from services.orm import UtcDateTime

    dialect = sqlite.dialect()
    ours, theirs = (
        UtcDateTime().dialect_impl(dialect).bind_processor(dialect),
        sqlite.DATETIME().bind_processor(dialect),
    )
    for moment in (
        datetime(2026, 11, 24, 15, 54, 7, 80772, tzinfo=UTC),
        datetime(999, 1, 2, 3, 4, 5),
        datetime(2026, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    ):
        utc = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
        assert ours(moment) == theirs(utc)
    assert ours(None) is None
