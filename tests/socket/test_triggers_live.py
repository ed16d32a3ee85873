"""Two real server processes (`python wsgi.py`, nothing else started) on one database, SQLite and PostgreSQL: both
scan for due schedules every second; each due schedule starts exactly one execution, and a webhook delivery sent to
both servers at once starts one (docs/triggers.md#exactly-once)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import UTC, datetime

import pytest
import requests
from sqlalchemy import update

from core import triggers as T
from services.db import Database
from services.models.triggers import TriggerSchedule
from tests.support.live_server import LiveServer

SCHEDULES = 8
WORKFLOW = {
    "name": "tick",
    "variables": {"n": {"type": "integer", "default": 0}},
    "steps": [{"id": "a", "tool": "echo", "params": {"n": "{{ vars.n }}"}}],
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def two_servers(request, tmp_path):
    database_url = None
    if request.param == "postgresql":
        database_url = request.getfixturevalue("pg_database")
        request.getfixturevalue("pg_emptier")()
    servers = [LiveServer(tmp_path / "a", database_url, demo="0")]
    try:
        servers[0].start()
        servers.append(LiveServer(tmp_path / "b", servers[0].database_url, demo="0"))
        servers[1].start()
        yield servers
    finally:
        for server in servers:
            server.stop()
            server.http.close()


def test_two_servers_fire_each_due_schedule_once_and_start_a_delivery_once(two_servers):
    first, second = two_servers
    made = first.post("/api/workflows", json=WORKFLOW)
    assert made.status_code == 201, made.text
    workflow_id = made.json()["id"]
    for n in range(SCHEDULES):
        answer = first.post(
            f"/api/workflows/{workflow_id}/schedules",
            json={"name": f"s{n}", "cron": "0 0 1 1 *", "timezone": "UTC", "variables": {"n": n}},
        )
        assert answer.status_code == 201, answer.text
    db = Database(first.database_url)
    try:  # their time has come (as if it were New Year): both servers' scans find them due
        with db.transaction() as session:
            session.execute(update(TriggerSchedule).values(next_fire_at=datetime(2026, 1, 1, tzinfo=UTC)))
    finally:
        db.dispose()

    def fired() -> bool:
        items = second.get(f"/api/workflows/{workflow_id}/schedules").json()["items"]
        return all(s["last_execution_id"] for s in items)

    first.wait_for(fired, timeout=20, message="every schedule fired")
    time.sleep(3)  # both servers scan three more times: nothing fires again
    runs = first.get(f"/api/executions/?workflow_id={workflow_id}&per_page=200").json()
    assert runs["total"] == SCHEDULES
    assert sorted(ex["variables"]["n"] for ex in runs["items"]) == list(range(SCHEDULES))
    for schedule in second.get(f"/api/workflows/{workflow_id}/schedules").json()["items"]:
        assert schedule["next_fire_at"] > "2027-01-01" and schedule["last_error"] == ""

    # one delivery, sent to both servers at the same moment
    hook = first.post(f"/api/workflows/{workflow_id}/hooks", json={"name": "twice"}).json()
    body, stamp, delivery = json.dumps({"n": 99}).encode(), str(int(time.time())), str(uuid.uuid4())
    headers = {
        "Content-Type": "application/json",
        T.TIMESTAMP_HEADER: stamp,
        T.DELIVERY_HEADER: delivery,
        T.SIGNATURE_HEADER: T.sign(hook["secret"], stamp, body),
    }
    barrier, answers = threading.Barrier(4), []

    def send(server: LiveServer) -> None:
        with requests.Session() as sender:
            sender.trust_env = False
            barrier.wait()
            answers.append(sender.post(server.url(hook["path"]), data=body, headers=headers, timeout=20))

    threads = [threading.Thread(target=send, args=(s,)) for s in (first, second, first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 201], [a.text for a in answers]
    assert len({a.json()["execution_id"] for a in answers}) == 1
    assert first.get(f"/api/executions/?workflow_id={workflow_id}&per_page=200").json()["total"] == SCHEDULES + 1
