"""Who runs a step, and effects once (issue #16), on SQLite and PostgreSQL:

- a failed advance is tried again (a transient error at once, any other after a pause) without running the tool
  again, and one that keeps failing fails the step with its reason: nothing is left `running`;
- a step being run carries its instance's lease: a second instance's recovery leaves a live lease alone, and a dead
  instance's step is taken over once its lease expires, by one instance; the result that comes back from the dead
  instance afterwards is dropped;
- every tool call carries the step run's idempotency key: the same for a re-run after a crash, another for another
  run; http.request sends it as Idempotency-Key (checked with a real loopback server), shell.run as an environment
  variable; it is on the step's record and in the audit of the call; file.write replaces a file atomically.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.tools import ToolContext
from services.container import Services
from services.executions import service as executions
from services.orchestration.leases import HOST, owner_gone
from services.orchestration.runner import Runner
from services.tools.files import FileWriteTool

# Longer than any test: a lease runs out when the test says so (_expire_lease), never because the machine was slow
# (a loaded machine let a 1 s lease run out before the test's own "the lease still holds").
LEASE_S = 120.0


@pytest.fixture
def settings(settings):
    """Leases no test outlives, and a named instance for the app's runner, which renews its leases but does not
    scan for expired ones (the other instances do, every 0.1 s): who takes a step over is the test's."""
    return settings.with_overrides(
        lease_s=LEASE_S, lease_scan_s=0, instance_id="app", shell_allow=("echo", "sleep", "printenv")
    )


class HoldTool:
    """A tool that takes time (the runner runs it outside any transaction) and records each call. While `hold` is
    set, calls wait for `release` (the first `holding` of them only, when given)."""

    name, description, risk = "test.hold", "waits while held, then returns which call it was", "read"
    params_schema = {"type": "object"}

    def __init__(self):
        self.calls: list[ToolContext] = []
        self.hold, self.release = threading.Event(), threading.Event()
        self.holding = 10**9
        self._lock = threading.Lock()

    def run(self, params, ctx):
        with self._lock:
            self.calls.append(ctx)
            number = len(self.calls)
        if self.hold.is_set() and number <= self.holding:
            self.release.wait(30)
        return {"call": number, "key": ctx.idempotency_key}

    def started(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.calls) < count:
            assert time.monotonic() < deadline, f"{len(self.calls)} calls, waited for {count}"
            time.sleep(0.01)


@pytest.fixture
def hold(services):
    tool = HoldTool()
    services.tools.register(tool)
    yield tool
    tool.release.set()


@pytest.fixture
def instances(settings, hold):
    """More instances of Coach on the same database (own engine, runner, instance id), as other servers would be."""
    made: list[Services] = []

    def make(name: str, *, keeper: bool = True, lease_s: float = LEASE_S, scan: bool = True) -> Services:
        svc = Services.build(
            settings.with_overrides(instance_id=name, lease_scan_s=0.1 if scan else 0, lease_s=lease_s)
        )
        svc.tools.register(hold)
        if keeper:
            svc.runner.scans.start_leases()
        made.append(svc)
        return svc

    yield make
    hold.release.set()
    for svc in made:
        svc.runner.wait_idle(5)
        svc.close()


def _step(body: dict, step_id: str) -> dict:
    return next(s for s in body["steps"] if s["step_id"] == step_id)


def _until(check, timeout: float = 30.0, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _finished(api, ex_id: str, timeout: float = 30.0) -> dict:
    return _until(
        lambda: (lambda b: b if b["status"] in ("completed", "failed", "cancelled") else None)(
            api.ok("GET", f"/api/executions/{ex_id}")
        ),
        timeout,
        f"execution {ex_id} to finish",
    )


def _tool_calls(api, ex_id: str) -> list[dict]:
    items = api.ok("GET", "/api/audit", query_string={"execution_id": ex_id, "action": "tool_call", "per_page": 100})[
        "items"
    ]
    return sorted(items, key=lambda e: e["seq"])


def _lease(services, ex_id: str) -> tuple[str | None, object]:
    from services.models.executions import Execution

    with services.db.read() as session:
        ex = session.get(Execution, ex_id)
        return ex.lease_owner, ex.lease_expires_at


def _expire_lease(services, ex_id: str) -> None:
    """The execution's lease runs out now: the test's clock (no lease runs out by itself during a test)."""
    from datetime import timedelta

    from services.models.executions import Execution
    from services.orm import utcnow

    with services.db.transaction() as session:
        ex = session.get(Execution, ex_id)
        assert ex.lease_owner is not None, "no lease to expire"
        ex.lease_expires_at = utcnow() - timedelta(seconds=1)


def _start_elsewhere(api, services, owner: Services, steps: list) -> str:
    """An execution started without this app's runner: `owner`'s runner takes it."""
    wf = api.workflow(steps)
    workspace = api.ok("GET", "/api/auth/me")["workspace_id"]
    with services.db.transaction() as session:
        ex_id = executions.start(session, services.definitions, workspace, wf["id"], {}, "normal").id
    owner.runner.schedule(ex_id)
    return ex_id


# -- a failed advance -----------------------------------------------------------------------------------------------


class OutTool:
    """A tool that takes time and returns what the test gives it (`output`), counting its calls."""

    name, description, risk = "test.out", "returns the output it is given", "read"
    params_schema = {"type": "object"}

    def __init__(self):
        self.calls, self.output = 0, None

    def run(self, params, ctx):
        self.calls += 1
        return self.output


class StoresLate(dict):
    """A result that cannot be stored the first `times` times it is written (its JSON encoding fails): a failure
    that is not transient, and goes away."""

    def __init__(self, times: int, **values):
        super().__init__(**values)
        self.times = times

    def items(self):
        if self.times > 0:
            self.times -= 1
            raise RuntimeError("the result could not be stored this time")
        return super().items()


@pytest.fixture
def out(services):
    tool = OutTool()
    services.tools.register(tool)
    return tool


def test_a_deadlock_recording_a_result_is_tried_again_and_the_tool_does_not_run_again(api, services, hold):
    """A real deadlock (PostgreSQL): the runner records a result (the execution's row locked) and claims the next
    step (it waits for the workspace's lock), while another transaction holds the workspace's lock and then waits
    for the execution's row. PostgreSQL aborts the runner's transaction, which is tried again and goes through."""
    if services.db.is_sqlite:
        pytest.skip("SQLite runs one writer at a time: no deadlock")
    from sqlalchemy import text

    from services.audit import service as audit

    hold.hold.set()
    hold.holding = 1
    wf = api.workflow(
        [{"id": "slow", "tool": "test.hold", "params": {}}, {"id": "next", "tool": "test.hold", "params": {}}]
    )
    ex_id = api.start(wf["id"])["execution_id"]
    hold.started(1)
    workspace = api.ok("GET", "/api/auth/me")["workspace_id"]
    other = {}

    def runner_waits() -> bool:  # in this database: other test workers' databases have their own waiters
        with services.db.engine.connect() as conn:
            return bool(
                conn.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND wait_event = 'advisory' AND datname = current_database()"
                    )
                ).scalar()
            )

    def holder():
        try:
            with services.db.transaction() as session:
                audit.lock_workspace(session, workspace)
                other["locked"] = True
                _until(runner_waits, what="the runner to wait for the workspace's lock")
                session.execute(text("SELECT id FROM executions WHERE id = :id FOR UPDATE"), {"id": ex_id})
            other["done"] = True
        except Exception as exc:  # noqa: BLE001 - reported below
            other["error"] = exc

    thread = threading.Thread(target=holder)
    thread.start()
    _until(lambda: other.get("locked"), what="the workspace's lock")
    hold.release.set()  # the first call returns: the runner records it and claims `next`
    thread.join(30)
    assert other.get("done") and "error" not in other, other
    body = _finished(api, ex_id)
    assert body["status"] == "completed", body
    assert len(hold.calls) == 2 and _step(body, "slow")["output"]["call"] == 1


def test_an_advance_failing_for_a_while_goes_on_after_a_pause(api, out, monkeypatch):
    monkeypatch.setattr(Runner, "ADVANCE_BACKOFF_S", (0.05, 0.05, 0.05))
    out.output = StoresLate(2, total=5)
    body = api.run([{"id": "slow", "tool": "test.out", "params": {}}, {"id": "then", "tool": "echo", "params": {}}])
    assert body["status"] == "completed", body
    assert out.calls == 1 and _step(body, "slow")["output"] == {"total": 5}


def test_an_advance_that_keeps_failing_fails_the_step_with_its_reason(api, out, monkeypatch):
    monkeypatch.setattr(Runner, "ADVANCE_BACKOFF_S", (0.01, 0.02))
    out.output = {"when": object()}  # a tool's bug: a result no database can store
    wf = api.workflow([{"id": "slow", "tool": "test.out", "params": {}}, {"id": "then", "tool": "echo", "params": {}}])
    ex_id = api.start(wf["id"])["execution_id"]
    body = _finished(api, ex_id)
    slow = _step(body, "slow")
    assert (body["status"], slow["status"], _step(body, "then")["status"]) == ("failed", "failed", "pending"), body
    assert "advancing the execution failed 3 times" in slow["error"] and "not JSON serializable" in slow["error"]
    assert body["error"]["step_id"] == "slow" and body["lease"] is None
    assert out.calls == 1


# -- leases ---------------------------------------------------------------------------------------------------------


def test_a_live_step_is_not_taken_over_by_another_instance(api, services, hold, instances):
    hold.hold.set()
    wf = api.workflow([{"id": "slow", "tool": "test.hold", "params": {}}])
    ex_id = api.start(wf["id"])["execution_id"]
    hold.started(1)
    other = instances("other")
    assert other.runner.scans.recover() == 0  # a restarted peer: it leaves the live step alone
    assert other.runner.scans.scan_leases() == 0  # and so does its scan
    body = api.ok("GET", f"/api/executions/{ex_id}")
    assert _step(body, "slow")["status"] == "running" and body["lease"]["owner"] == "app"
    assert len(hold.calls) == 1
    hold.release.set()
    body = _finished(api, ex_id)
    assert body["status"] == "completed" and body["lease"] is None and len(hold.calls) == 1


def test_a_running_steps_lease_is_renewed_while_its_tool_runs(api, services, hold, instances):
    """Every third of the lease's length, by the instance running the step. Nobody scans for expired leases here
    (not even that instance), and the lease is 6 s: a renewal due every 2 s that a loaded machine delays by seconds
    still comes before the lease runs out; the test waits for it however long it takes."""
    hold.hold.set()
    keeper = instances("keeper", lease_s=6.0, scan=False)
    ex_id = _start_elsewhere(api, services, keeper, [{"id": "slow", "tool": "test.hold", "params": {}}])
    hold.started(1)
    owner, first = _lease(services, ex_id)
    assert owner == "keeper" and first is not None
    _until(
        lambda: (lambda lease: lease[0] == "keeper" and lease[1] is not None and lease[1] > first)(
            _lease(services, ex_id)
        ),
        what="the lease to be renewed",
    )
    assert len(hold.calls) == 1
    hold.release.set()
    body = _finished(api, ex_id)
    assert body["status"] == "completed" and body["lease"] is None and len(hold.calls) == 1


def test_a_dead_instances_step_is_taken_over_once_when_its_lease_expires(api, services, hold, instances):
    hold.hold.set()
    hold.holding = 1  # the dead instance's call hangs; the one that takes over returns at once
    ghost = instances("ghost")
    ex_id = _start_elsewhere(
        api,
        services,
        ghost,
        [{"id": "slow", "tool": "test.hold", "params": {}}, {"id": "then", "tool": "echo", "params": {}}],
    )
    hold.started(1)
    others = [instances("b"), instances("c")]  # both scan for expired leases, every 0.1 s
    ghost.runner.shutdown()  # the instance dies: nobody renews its lease; its tool call hangs on
    assert others[0].runner.scans.recover() == 0  # the lease still holds
    assert others[1].runner.scans.scan_leases() == 0
    assert _lease(services, ex_id)[0] == "ghost" and len(hold.calls) == 1
    _expire_lease(services, ex_id)  # its time runs out
    body = _finished(api, ex_id, timeout=30)
    assert body["status"] == "completed", body
    slow = _step(body, "slow")
    assert len(hold.calls) == 2 and slow["output"]["call"] == 2  # taken over once, by one instance
    key = hold.calls[0].idempotency_key
    assert key == hold.calls[1].idempotency_key == slow["idempotency_key"] == f"{ex_id}:slow:1"
    assert slow["run"] == 1
    calls = _tool_calls(api, ex_id)
    assert [(c["after"]["idempotency_key"], c["after"]["repeat"], c["result"]) for c in calls] == [
        (key, False, "started"),
        (key, True, "repeated"),
    ]
    assert calls[0]["after"]["instance"] == "ghost" and calls[1]["after"]["instance"] in ("b", "c")

    hold.release.set()  # the dead instance's call comes back: its result is dropped (its lease was taken over)
    ghost.runner.wait_idle(5)
    assert _step(api.ok("GET", f"/api/executions/{ex_id}"), "slow")["output"]["call"] == 2


def _plant_running(api, services, hold, owner: str, expires_in: float) -> str:
    """An execution caught with step `slow` running under `owner`'s lease (as a crash leaves it)."""
    from datetime import timedelta

    from services.models.executions import Execution
    from services.orm import utcnow

    hold.hold.set()
    hold.holding = 0
    ex_id = _start_elsewhere(api, services, services, [{"id": "slow", "tool": "test.hold", "params": {}}])
    _finished(api, ex_id)
    with services.db.transaction() as session:
        ex = session.get(Execution, ex_id)
        executions.set_step(ex, "slow", status="running", output=None, finished_at=None)
        ex.status, ex.finished_at = "running", None
        ex.lease_owner, ex.lease_expires_at = owner, utcnow() + timedelta(seconds=expires_in)
    hold.calls.clear()
    return ex_id


def test_recovery_takes_over_an_expired_lease_and_leaves_a_live_one(api, services, hold, instances):
    live = _plant_running(api, services, hold, "elsewhere:41:abcd", expires_in=60)
    expired = _plant_running(api, services, hold, "elsewhere:42:abcd", expires_in=-1)
    restarted = instances("restarted", keeper=False)
    assert restarted.runner.scans.recover() == 1
    restarted.runner.wait_idle(10)
    assert api.ok("GET", f"/api/executions/{expired}")["status"] == "completed"
    assert [c.execution_id for c in hold.calls] == [expired]
    assert hold.calls[0].idempotency_key == f"{expired}:slow:1"  # the key of the run it takes over
    body = api.ok("GET", f"/api/executions/{live}")
    assert body["status"] == "running" and body["lease"]["owner"] == "elsewhere:41:abcd"


def test_a_gone_process_of_this_host_is_taken_over_at_once(api, services, hold, instances):
    """A process of this host that no longer runs holds no lease, expired or not: a restart resumes its steps at
    once (the default instance id says host and process)."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    ex_id = _plant_running(api, services, hold, f"{HOST}:{gone.pid}:abcd", expires_in=60)
    restarted = instances("restarted", keeper=False)
    assert owner_gone(f"{HOST}:{gone.pid}:abcd")
    assert owner_gone(f"{HOST}:{os.getpid()}:no-runner-of-this-process")
    assert not owner_gone(f"{HOST}:1:abcd")  # alive (init), and not this process
    assert restarted.runner.scans.recover() == 1
    restarted.runner.wait_idle(10)
    assert api.ok("GET", f"/api/executions/{ex_id}")["status"] == "completed" and len(hold.calls) == 1


def test_a_runner_of_this_process_is_alive_until_it_shuts_down(services):
    mine = Runner(
        services.db,
        services.tools,
        services.definitions,
        services.notifier,
        services.settings.with_overrides(instance_id=""),
    )
    try:
        assert mine.leases.owner.startswith(f"{HOST}:{os.getpid()}:")
        assert not owner_gone(mine.leases.owner)
    finally:
        mine.shutdown()
    assert owner_gone(mine.leases.owner)


# -- idempotency keys -------------------------------------------------------------------------------------------------


class Receiver:
    """A real HTTP server on loopback that records every request's path and Idempotency-Key; it can hold the first
    request of a path (as a receiver still working when the caller's server dies)."""

    def __init__(self):
        self.requests: list[tuple[str, str | None, dict]] = []
        self.hold_first: set[str] = set()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                first = not any(path == self.path for path, _, _ in receiver.requests)
                receiver.requests.append((self.path, self.headers.get("Idempotency-Key"), json.loads(body or b"null")))
                if first and self.path in receiver.hold_first:
                    receiver.release.wait(30)
                answer = json.dumps({"seen": len(receiver.requests)}).encode()
                self.send_response(201)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def keys(self, path: str) -> list[str | None]:
        return [key for p, key, _ in self.requests if p == path]

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def test_http_request_sends_the_runs_key_as_idempotency_key(api, receiver):
    steps = [
        {
            "id": "pay",
            "tool": "http.request",
            "params": {"method": "POST", "url": receiver.url("/pay"), "json": {"amount": 5}},
        },
        {
            "id": "own",
            "tool": "http.request",
            "params": {
                "method": "POST",
                "url": receiver.url("/own"),
                "json": {},
                "headers": {"idempotency-key": "the-step-s-own"},
            },
        },
    ]
    first = api.run(steps)
    second = api.run(steps)
    assert first["status"] == second["status"] == "completed", (first, second)
    keys = [_step(b, "pay")["idempotency_key"] for b in (first, second)]
    assert keys == [f"{first['execution_id']}:pay:1", f"{second['execution_id']}:pay:1"]  # one per run
    assert receiver.keys("/pay") == keys
    assert receiver.keys("/own") == ["the-step-s-own", "the-step-s-own"]  # a step's own header wins
    assert [c["after"]["idempotency_key"] for c in _tool_calls(api, first["execution_id"])] == [
        keys[0],
        f"{first['execution_id']}:own:1",
    ]


def test_a_call_made_again_after_a_crash_carries_the_key_of_the_first(api, services, receiver, instances):
    receiver.hold_first.add("/pay")  # the receiver is still working on it when the instance that called dies
    ghost = instances("ghost")
    ex_id = _start_elsewhere(
        api,
        services,
        ghost,
        [
            {
                "id": "pay",
                "tool": "http.request",
                "timeout_s": 30,
                "params": {"method": "POST", "url": receiver.url("/pay"), "json": {"amount": 5}},
            }
        ],
    )
    _until(lambda: receiver.requests, what="the first request")
    ghost.runner.shutdown()  # dies: its lease runs out, and an instance takes the step over
    _expire_lease(services, ex_id)
    instances("b")
    body = _finished(api, ex_id, timeout=30)
    receiver.release.set()  # the first call's answer comes at last (to nobody: its instance is gone)
    assert body["status"] == "completed", body
    key = _step(body, "pay")["idempotency_key"]
    assert receiver.keys("/pay") == [key, key] and key == f"{ex_id}:pay:1"
    assert [c["after"]["idempotency_key"] for c in _tool_calls(api, ex_id)] == [key, key]


def test_shell_run_gets_the_key_in_its_environment(api):
    api.allow("shell.run")
    body = api.run([{"id": "env", "tool": "shell.run", "params": {"command": ["printenv", "COACH_IDEMPOTENCY_KEY"]}}])
    assert body["status"] == "completed", body
    assert _step(body, "env")["output"]["stdout"].strip() == f"{body['execution_id']}:env:1"


def test_file_write_replaces_a_file_atomically(settings, monkeypatch):
    tool = FileWriteTool(settings)
    ctx = ToolContext(workspace_id="ws1", idempotency_key="k")
    tool.run({"path": "out/a.txt", "content": "first"}, ctx)
    folder = Path(settings.resolved_data_dir) / "ws1" / "out"
    os.chmod(folder / "a.txt", 0o640)

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:  # a failure before the rename leaves the old content whole, and no litter
        m.setattr(os, "replace", crash)
        with pytest.raises(Exception, match="No space left"):
            tool.run({"path": "out/a.txt", "content": "second"}, ctx)
    assert (folder / "a.txt").read_text() == "first" and os.listdir(folder) == ["a.txt"]
    for _ in range(2):  # written again (a re-run): the same one file
        tool.run({"path": "out/a.txt", "json": {"v": 2}}, ctx)
    assert json.loads((folder / "a.txt").read_text()) == {"v": 2} and os.listdir(folder) == ["a.txt"]
    assert (folder / "a.txt").stat().st_mode & 0o777 == 0o640  # its permissions kept
