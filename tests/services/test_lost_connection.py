"""PostgreSQL connections that went away (the server restarted, an administrator ended a backend): the pool does
not ping before every transaction (a round trip each), so a dead pooled connection fails its first statement; the
transaction is tried again on a new connection and the client never sees it."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import select, text

from services.db import is_transient, retrying
from services.models.workflows import Workflow

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_services(services):
    if services.db.is_sqlite:
        pytest.skip("PostgreSQL only")
    return services


def _end_every_other_backend(db) -> int:
    """What a restart does to the pool: every connection of the app to its database is ended by the server."""
    url = db.engine.url.set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as admin:
        return admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]


def _pooled_connection_ready(db) -> None:
    with db.transaction() as tx:
        tx.execute(text("SELECT 1"))


def test_a_transaction_on_a_dead_pooled_connection_is_tried_again_on_a_new_one(pg_services):
    db = pg_services.db
    _pooled_connection_ready(db)
    assert _end_every_other_backend(db) >= 1
    failures = []

    def attempt():
        try:
            with db.transaction() as tx:
                return tx.scalar(text("SELECT 42"))
        except Exception as exc:
            failures.append(exc)
            raise

    assert retrying(attempt, sleep=lambda _s: None) == 42
    assert len(failures) == 1 and is_transient(failures[0]) and failures[0].connection_invalidated


def test_a_request_after_the_servers_connections_ended_answers_as_usual(pg_services, client):
    assert (
        client.post(
            "/api/workflows",
            json={"name": "before", "steps": [{"id": "s1", "tool": "echo", "params": {"message": "hi"}}]},
        ).status_code
        == 201
    )
    assert _end_every_other_backend(pg_services.db) >= 1

    answer = client.post(
        "/api/workflows", json={"name": "after", "steps": [{"id": "s1", "tool": "echo", "params": {"message": "hi"}}]}
    )

    assert answer.status_code == 201, answer.get_json()
    with pg_services.db.read() as tx:
        assert sorted(tx.scalars(select(Workflow.name).where(Workflow.name.in_(["before", "after"])))) == [
            "after",
            "before",
        ]
