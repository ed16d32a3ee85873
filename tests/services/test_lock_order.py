"""One lock order on PostgreSQL (issue #16): transactions that lock a workspace's metric rows in opposite orders
wait for each other instead of deadlocking, because every such row is locked under the workspace's lock, taken
first. And what counts as a transient error, tried again by services.db.retrying."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm.exc import StaleDataError

from services.db import Database, is_transient, retrying
from services.metrics import service as metrics
from services.models.users import Workspace
from services.unit_of_work import unit_of_work


class _Pg(Exception):
    def __init__(self, sqlstate):
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (OperationalError("UPDATE", {}, _Pg("40P01")), True),  # deadlock_detected
        (OperationalError("UPDATE", {}, _Pg("40001")), True),  # serialization_failure
        (OperationalError("BEGIN", {}, sqlite3.OperationalError("database is locked")), True),
        (StaleDataError("0 rows matched"), True),
        # PostgreSQL at its max_connections, as psycopg reports it at connect time (no SQLSTATE): a connection may free
        # up
        (
            OperationalError(
                "connect",
                {},
                Exception(
                    'connection failed: connection to server at "127.0.0.1", port 5432 '
                    "failed: FATAL:  sorry, too many clients already"
                ),
            ),
            True,
        ),
        (IntegrityError("INSERT", {}, _Pg("23505")), False),  # unique_violation: not something a new try gets past
        (OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: x")), False),
        (RuntimeError("a bug"), False),
    ],
)
def test_transient_errors(error, transient):
    assert is_transient(error) is transient


def test_retrying_tries_again_on_transient_errors_only_and_a_bounded_number_of_times():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("UPDATE", {}, _Pg("40P01"))
        return "done"

    assert retrying(flaky, sleep=lambda s: None) == "done" and len(calls) == 3

    calls.clear()

    def always():
        calls.append(1)
        raise OperationalError("UPDATE", {}, _Pg("40P01"))

    with pytest.raises(OperationalError):
        retrying(always, tries=4, sleep=lambda s: None)
    assert len(calls) == 4

    calls.clear()

    def bug():
        calls.append(1)
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        retrying(bug, sleep=lambda s: None)
    assert len(calls) == 1


@pytest.mark.postgres
def test_metric_rows_locked_in_opposite_orders_wait_instead_of_deadlocking(request, tmp_path):
    from tests.conftest import _fresh_url

    db = Database(_fresh_url("postgresql", request, tmp_path))
    with unit_of_work(db) as uow:
        session = uow.session
        ws = Workspace(slug="w", name="w")
        session.add(ws)
        session.flush()
        workspace = ws.id
    a, b = [("workflow", "a")], [("workflow", "b")]
    with unit_of_work(db) as uow:  # the rows exist: locking them is all that is left
        session = uow.session
        metrics.record_suggestion(session, workspace, a + b)
    halfway = threading.Barrier(2, timeout=5)
    errors: list = []

    def lock(first, second):
        try:
            with unit_of_work(db) as uow:
                session = uow.session
                metrics.record_suggestion(session, workspace, first)  # one statement locks one row ...
                try:
                    halfway.wait()  # ... both transactions hold their first row (without the workspace lock)
                except threading.BrokenBarrierError:
                    pass  # with it, the second transaction waits for the first one's commit: no halfway
                metrics.record_suggestion(session, workspace, second)  # ... then the other row
        except Exception as exc:  # noqa: BLE001 - a deadlock would be reported here
            errors.append(exc)

    threads = [threading.Thread(target=lock, args=(a, b)), threading.Thread(target=lock, args=(b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    with db.read() as session:
        counted = metrics.load_many(session, workspace, "workflow", ["a", "b"])
    assert counted["a"].snapshot()["suggestions"] == counted["b"].snapshot()["suggestions"] == 3
    db.dispose()
