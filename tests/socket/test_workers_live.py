"""Steps on Celery workers (COACH_BROKER_URL, services/worker.py; issue #16 item 3): a server takes the decisions
and hands executions that need a slow tool to a worker process, which runs the tool and pushes its events through
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
    server = LiveServer(tmp_path / "server", demo="0",
                        env={"COACH_BROKER_URL": broker, "COACH_MESSAGE_QUEUE": queue, "COACH_LEASE_S": "3"})
    workers: list[subprocess.Popen] = []

    def worker(name: str) -> subprocess.Popen:
        log = open(tmp_path / f"{name}.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "services.worker", "worker", "--pool=solo",
                                 f"--hostname={name}@%h", "--loglevel=INFO", "--without-mingle", "--without-gossip"],
                                cwd=REPO_ROOT, env=server.environment(), stdout=log, stderr=subprocess.STDOUT)
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
    answer = server.post("/api/workflows", json={"name": "Booking", "variables": {"order": {"type": "string"}}, "steps": [
        {"id": "book", "name": "Book", "type": "action", "tool": "http.request",
         "params": {"method": "POST", "url": url, "json": {"order": "{{ vars.order }}"}}},
        {"id": "done", "name": "Done", "type": "action", "tool": "echo", "params": {"message": "booked"}}]})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _wait_status(server: LiveServer, execution_id: str, status: str, timeout: float = 30) -> dict:
    return server.wait_for(lambda: (lambda ex: ex if ex["status"] == status else None)(
        server.get(f"/api/executions/{execution_id}").json()), timeout=timeout, message=f"execution {status}")


def test_a_slow_step_runs_on_a_worker_and_its_events_reach_the_servers_clients(cluster, calls):
    server, worker = cluster
    workflow_id = _workflow(server, calls.url)
    updates: list[dict] = []
    client = socketio.Client(reconnection=False)
    client.on("execution_update", lambda update: updates.append(update))
    client.connect(server.base_url, transports=["websocket"], auth={"token": server.token}, wait_timeout=10)
    client.call("join_workspace", {}, timeout=10)
    try:
        answer = server.post("/api/executions", json={"workflow_id": workflow_id, "mode": "normal",
                                                      "variables": {"order": "A-1"}})
        assert answer.status_code == 201, answer.text
        execution_id = answer.json()["execution_id"]
        time.sleep(1.5)  # no worker yet: the server does not run the slow tool itself
        assert calls.requests == []
        assert server.get(f"/api/executions/{execution_id}").json()["status"] in ("pending", "running")

        worker("w1")
        done = _wait_status(server, execution_id, "completed")
        assert [s["status"] for s in done["steps"]] == ["succeeded", "succeeded"]
        assert len(calls.requests) == 1 and '"A-1"' in calls.requests[0]["body"]
        # the worker's events came through the message queue to a client of the server
        server.wait_for(lambda: any(u.get("execution_id") == execution_id and u.get("status") == "completed"
                                    for u in updates), timeout=10, message="the completion pushed to the client")
    finally:
        client.disconnect()
