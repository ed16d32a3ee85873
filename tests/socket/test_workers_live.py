"""Steps on Celery workers (COACH_BROKER_URL, services/worker.py; issue #16 item 3): a server takes the
decisions and hands executions that need a slow tool to a worker process, which runs the tool and pushes its events
through
the Socket.IO message queue to the clients of the server. Real Redis, real `celery worker` processes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import socketio

from tests.support.live_server import REPO_ROOT, LiveServer

REDIS = "redis://127.0.0.1:6379"


@pytest.fixture
def redis_dbs():
    """Two Redis databases of their own (broker, message queue), emptied before and after."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(f"{REDIS}/0", socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis at {REDIS} does not answer ({type(exc).__name__})")
    dbs = (11, 12)
    for db in dbs:
        redis.Redis.from_url(f"{REDIS}/{db}").flushdb()
    yield tuple(f"{REDIS}/{db}" for db in dbs)
    for db in dbs:
        redis.Redis.from_url(f"{REDIS}/{db}").flushdb()


class Calls:
    """A loopback HTTP service the workflow's step calls; each request waits until `release` is set."""

    def __init__(self):
        self.requests: list[dict] = []
        self.release = threading.Event()
        self.release.set()
        calls = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                calls.requests.append({"headers": dict(self.headers), "body": body.decode()})
                calls.release.wait(30)
                payload = b'{"booked": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/book"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.server.shutdown()


@pytest.fixture
def calls():
    service = Calls()
    yield service
    service.close()


@pytest.fixture
def cluster(tmp_path, redis_dbs):
    """A server whose slow steps go to Celery workers, and a factory of workers (each `celery worker` process)."""
    broker, queue = redis_dbs
    server = LiveServer(
        tmp_path / "server",
        demo="0",
        env={
            "COACH_BROKER_URL": broker,
            "COACH_MESSAGE_QUEUE": queue,
            "COACH_LEASE_S": "3",
            "COACH_LEASE_SCAN_S": "1",
            "COACH_WORKER_REDELIVER_S": "5",
        },
    )
    workers: list[subprocess.Popen] = []

    def worker(name: str) -> subprocess.Popen:
        log = open(tmp_path / f"{name}.log", "w")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "services.worker",
                "worker",
                "--pool=solo",
                f"--hostname={name}@%h",
                "--loglevel=INFO",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=REPO_ROOT,
            env=server.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        workers.append(proc)
        deadline = time.monotonic() + 60
        while "ready." not in (tmp_path / f"{name}.log").read_text():
            assert proc.poll() is None, (tmp_path / f"{name}.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"worker {name} did not start"
            time.sleep(0.1)
        return proc

    try:
        server.start()
        yield server, worker
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        server.stop()
        server.http.close()


def _workflow(server: LiveServer, url: str) -> str:
    answer = server.post(
        "/api/workflows",
        json={
            "name": "Booking",
            "variables": {"order": {"type": "string"}},
            "steps": [
                {
                    "id": "book",
                    "name": "Book",
                    "type": "action",
                    "tool": "http.request",
                    "params": {"method": "POST", "url": url, "json": {"order": "{{ vars.order }}"}},
                },
                {"id": "done", "name": "Done", "type": "action", "tool": "echo", "params": {"message": "booked"}},
            ],
        },
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _wait_status(server: LiveServer, execution_id: str, status: str, timeout: float = 30) -> dict:
    return server.wait_for(
        lambda: (lambda ex: ex if ex["status"] == status else None)(
            server.get(f"/api/executions/{execution_id}").json()
        ),
        timeout=timeout,
        message=f"execution {status}",
    )


def test_a_slow_step_runs_on_a_worker_and_its_events_reach_the_servers_clients(cluster, calls):
    server, worker = cluster
    workflow_id = _workflow(server, calls.url)
    updates: list[dict] = []
    changes: list[dict] = []
    client = socketio.Client(reconnection=False)
    client.on("execution_update", lambda update: updates.append(update))
    client.on("queue_changed", lambda change: changes.append(change))
    client.connect(server.base_url, transports=["websocket"], auth={"token": server.token}, wait_timeout=30)
    client.call("join_workspace", {}, timeout=30)
    try:
        answer = server.post(
            "/api/executions", json={"workflow_id": workflow_id, "mode": "normal", "variables": {"order": "A-1"}}
        )
        assert answer.status_code == 201, answer.text
        execution_id = answer.json()["execution_id"]
        assert client.call("join_execution", {"execution_id": execution_id}, timeout=30)["ok"] is True
        time.sleep(1.5)  # no worker yet: the server does not run the slow tool itself
        assert calls.requests == []
        assert server.get(f"/api/executions/{execution_id}").json()["status"] in ("pending", "running")

        worker("w1")
        done = _wait_status(server, execution_id, "completed")
        assert [s["status"] for s in done["steps"]] == ["succeeded", "succeeded"]
        assert len(calls.requests) == 1 and '"A-1"' in calls.requests[0]["body"]
        # the worker's events came through the message queue to a client of the server: the update to the
        # execution's room, and the workspace's room told its queue changed (sent by the worker at once)
        server.wait_for(
            lambda: any(u.get("execution_id") == execution_id and u.get("status") == "completed" for u in updates),
            timeout=10,
            message="the completion pushed to the client",
        )
        server.wait_for(
            lambda: any({"execution_id": execution_id, "status": "completed"} in c["executions"] for c in changes),
            timeout=10,
            message="the workspace room told of the completion",
        )
    finally:
        client.disconnect()


def _tool_calls(server: LiveServer, execution_id: str) -> list[dict]:
    events = server.get("/api/audit", params={"action": "tool_call", "per_page": 100}).json()["items"]
    return [e for e in events if e.get("execution_id") == execution_id]


def test_a_worker_killed_mid_step_loses_nothing_and_the_step_is_taken_over_once(cluster, calls):
    """SIGKILL of the worker while its tool call is in flight: the step goes to the other worker (the server's lease
    scan sees the dead holder; Redis later re-delivers the lost task too), runs again once with the same
    Idempotency-Key, and the execution completes once."""
    server, worker = cluster
    workflow_id = _workflow(server, calls.url)
    first = worker("w1")
    calls.release.clear()  # the booking hangs until released
    execution_id = server.post(
        "/api/executions", json={"workflow_id": workflow_id, "mode": "normal", "variables": {"order": "B-2"}}
    ).json()["execution_id"]
    server.wait_for(lambda: len(calls.requests) == 1, timeout=30, message="the first call in flight")
    first.kill()  # SIGKILL: the worker and its task are gone mid-call
    first.wait(10)
    calls.release.set()  # the service answers the lost request; nobody hears it
    worker("w2")
    done = _wait_status(server, execution_id, "completed", timeout=60)
    assert [s["status"] for s in done["steps"]] == ["succeeded", "succeeded"]
    time.sleep(6)  # past COACH_WORKER_REDELIVER_S: the lost task comes back to w2, and changes nothing
    keys = [r["headers"].get("Idempotency-Key") for r in calls.requests]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1], keys  # run again once, with the key of the first
    final = server.get(f"/api/executions/{execution_id}").json()
    assert final["status"] == "completed" and final["steps"] == done["steps"]
    audited = _tool_calls(server, execution_id)
    assert [e["after"]["idempotency_key"] for e in audited] == [keys[0]] * 2, audited


def test_a_server_killed_mid_step_has_its_step_taken_over_once_by_a_peer(tmp_path, calls):
    """Two instances on one database, no broker: the one running a step dies (SIGKILL); its peer takes the step over
    (its lease scan sees the dead holder), runs it again once with the same Idempotency-Key, and the execution
    completes. Restarting a live peer never re-runs its steps (tests/api/test_step_ownership.py)."""
    env = {"COACH_LEASE_S": "3", "COACH_LEASE_SCAN_S": "1"}
    first = LiveServer(tmp_path / "a", demo="0", env=env)
    first.start()
    second = None
    try:
        second = LiveServer(tmp_path / "b", database_url=first.database_url, demo="0", env=env)
        workflow_id = _workflow(first, calls.url)
        calls.release.clear()
        execution_id = first.post(
            "/api/executions", json={"workflow_id": workflow_id, "mode": "normal", "variables": {"order": "C-3"}}
        ).json()["execution_id"]
        first.wait_for(lambda: len(calls.requests) == 1, timeout=30, message="the first call in flight")
        second.start()  # a peer, up while the first instance runs the step: it leaves the live step alone
        time.sleep(2)
        assert len(calls.requests) == 1
        first.kill()
        calls.release.set()
        done = _wait_status(second, execution_id, "completed", timeout=60)
        assert [s["status"] for s in done["steps"]] == ["succeeded", "succeeded"]
        keys = [r["headers"].get("Idempotency-Key") for r in calls.requests]
        assert len(keys) == 2 and keys[0] == keys[1], keys
    finally:
        first.stop()
        if second is not None:
            second.stop()
