"""Coaching throughput: (a) in-process beside LangGraph, (b) through the real server with socket clients.

(a) A 10-step workflow, every step suggested and accepted, N executions driven one decision at a time on a
    durable SQLite file: decisions/s and decision → next-suggestion latency. LangGraph does the same work
    (interrupt() in each of 10 nodes, Command(resume=...), SqliteSaver on a file) in the same run.
(b) `python wsgi.py` in a subprocess; C concurrent coaching executions, each driven by its own python-socketio
    client that decides as soon as a suggestion arrives (plus an optional think time); decisions/s, p50/p99.
(c) PostgreSQL: the statements one decision sends to the database (counted on the driver's cursors).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.revisions import checkout  # noqa: E402
from bench.stats import finish, percentile, settle, slices, take_turns  # noqa: E402

STEPS = 10
WORKFLOW = {
    "name": "bench",
    "steps": [
        {"id": f"step_{i}", "tool": "echo", "params": {"message": f"step {i} of {{{{ execution.id }}}}"}}
        for i in range(STEPS)
    ],
}


def summary(engine: str, latencies: list[float], seconds: float, **extra) -> dict:
    return {
        "engine": engine,
        "decisions": len(latencies),
        "seconds": round(seconds, 3),
        "decisions_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        **extra,
    }


def coach_in_process(executions: int, db_path: str, policy_rules: int = 0) -> dict:
    return finish(coach_turns(executions, db_path, policy_rules))


def coach_turns(executions: int, db_path: str, policy_rules: int = 0, rounds: int = 1) -> Generator[None, None, dict]:
    """Coach's in-process loop as turns (see take_turns): set up, then one of `rounds` slices of the executions per
    turn; returns the summary."""
    from config import Settings
    from services.container import Services
    from services.decisions import coaching as decisions
    from services.executions import service as execution_service
    from services.migrate import upgrade
    from services.notifier import Notifier
    from services.policies import service as policies
    from services.workflows import service as workflows

    class Latest(Notifier):
        """Keeps the newest suggestion per execution, as a panel would."""

        def __init__(self):
            super().__init__(None)
            self.latest: dict[str, dict] = {}

        def emit(self, event, payload, room):
            rooms = (room,) if isinstance(room, str) else room  # one room, or several reached by one emit
            if event == "coaching_suggestion" and any(r.startswith("execution:") for r in rooms):
                self.latest[payload["execution_id"]] = payload

    notifier = Latest()
    settings = Settings(
        env="bench",
        database_url=f"sqlite:///{db_path}",
        instance_dir=str(Path(db_path).parent),
        demo=False,
        log_level="WARNING",
    )
    services = Services.build(settings, notifier=notifier, spawn=lambda fn, *args: fn(*args))
    upgrade(services.db)
    workspace = services.default_workspace_id()
    with services.db.transaction() as session:
        wf_id = workflows.create(session, services.tools, workspace, WORKFLOW).id
        for rule in bench_rules(policy_rules):
            policies.create(session, workspace, rule, "bench")
    ids = []
    for _ in range(executions):  # untimed, as on the LangGraph side: run each up to its first suggestion
        with services.db.transaction() as session:
            ids.append(execution_service.start(session, services.definitions, workspace, wf_id, {}, "coaching").id)
        services.runner.schedule(ids[-1])
    latencies, seconds = [], 0.0
    for part in slices(ids, rounds):
        yield
        settle()
        started = time.perf_counter()
        for execution_id in part:
            for _ in range(STEPS):
                suggestion = notifier.latest[execution_id]
                t0 = time.perf_counter()
                answer = decisions.submit(
                    services,
                    workspace,
                    execution_id,
                    {"suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
                    "bench",
                )
                latencies.append((time.perf_counter() - t0) * 1000)
                assert answer["ok"]
        seconds += time.perf_counter() - started
    with services.db.transaction() as session:
        done = [execution_service.get(session, workspace, i).status for i in ids]
    services.close()
    if done != ["completed"] * executions:
        raise RuntimeError(f"not every execution completed: {sorted(set(done))}")
    return summary(
        "coach" if not policy_rules else f"coach, {policy_rules} rules",
        latencies,
        seconds,
        executions=executions,
        policy_rules=policy_rules,
        rounds=rounds,
    )


def statements_per_decision(url: str, executions: int = 5) -> dict:
    """(c) What one decision costs the database, on PostgreSQL: the statements the driver runs for a decision
    (accept, then the next suggestion opened in the same transaction), counted on psycopg's cursors (execute and
    executemany each count one: one statement sent, with one or several parameter sets), so that whatever runs
    them (the ORM, Core, a driver cursor used directly) is counted. `url`: an administrative connection; the
    bench makes a database of its own there and drops it after."""
    import uuid

    import psycopg
    from sqlalchemy import event

    from config import Settings
    from services.container import Services
    from services.decisions import coaching as decisions
    from services.executions import service as execution_service
    from services.migrate import upgrade
    from services.notifier import Notifier
    from services.workflows import service as workflows

    class Latest(Notifier):
        def __init__(self):
            super().__init__(None)
            self.latest: dict[str, dict] = {}

        def emit(self, event, payload, room):
            rooms = (room,) if isinstance(room, str) else room
            if event == "coaching_suggestion" and any(r.startswith("execution:") for r in rooms):
                self.latest[payload["execution_id"]] = payload

    counting = {"on": False, "statements": [], "sets": 0}

    class Counted(psycopg.Cursor):
        def execute(self, query, params=None, **kwargs):
            if counting["on"]:
                counting["statements"].append(_first_words(query))
                counting["sets"] += 1
            return super().execute(query, params, **kwargs)

        def executemany(self, query, params_seq, **kwargs):
            params_seq = list(params_seq)
            if counting["on"]:
                counting["statements"].append(_first_words(query) + f" (x{len(params_seq)})")
                counting["sets"] += len(params_seq)
            return super().executemany(query, params_seq, **kwargs)

    name = f"coach_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        notifier = Latest()
        with tempfile.TemporaryDirectory() as folder:
            settings = Settings(
                env="bench",
                database_url=url.rsplit("/", 1)[0] + f"/{name}",
                instance_dir=folder,
                demo=False,
                log_level="WARNING",
            )
            services = Services.build(settings, notifier=notifier, spawn=lambda fn, *args: fn(*args))
            upgrade(services.db)

            @event.listens_for(services.db.engine, "connect")
            def counted_cursors(dbapi_connection, _record):
                dbapi_connection.cursor_factory = Counted

            services.db.engine.dispose()  # the pool's connections again, with counted cursors
            workspace = services.default_workspace_id()
            with services.db.transaction() as session:
                wf_id = workflows.create(session, services.tools, workspace, WORKFLOW).id
            per_decision: list[int] = []
            sets: list[int] = []
            example: list[str] = []
            for _ in range(executions):
                with services.db.transaction() as session:
                    execution_id = execution_service.start(
                        session, services.definitions, workspace, wf_id, {}, "coaching"
                    ).id
                services.runner.schedule(execution_id)
                for step in range(STEPS):
                    suggestion = notifier.latest[execution_id]
                    counting.update(on=True, statements=[], sets=0)
                    decisions.submit(
                        services,
                        workspace,
                        execution_id,
                        {"suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
                        "bench",
                    )
                    counting["on"] = False
                    per_decision.append(len(counting["statements"]))
                    sets.append(counting["sets"])
                    if step == STEPS // 2 and not example:
                        example = list(counting["statements"])
            services.close()
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    per_decision.sort()
    return {
        "decisions": len(per_decision),
        "statements_p50": per_decision[len(per_decision) // 2],
        "statements_max": per_decision[-1],
        "parameter_sets_p50": sorted(sets)[len(sets) // 2],
        "example": example,
    }


def _first_words(query) -> str:
    text = query if isinstance(query, str) else query.decode() if isinstance(query, bytes) else str(query)
    words = " ".join(text.split())
    return words[:90]


def bench_rules(n: int) -> list[dict]:
    """n policy rules as bench/policy.py writes them (globs over 40 tools, helpers, predicates), of which one in
    a hundred names the bench's tool with a predicate that does not hold: every call of the workflow is judged
    (when suggested, decided and run) against all of them, through the service's per-revision cache."""
    from bench.policy import written

    out = []
    for i in range(n):
        if i % 100 == 99:
            out.append(
                {
                    "name": f"echo rule {i}",
                    "order": i,
                    "effect": "deny",
                    "reason": "bench",
                    "match": {
                        "tool": "echo",
                        "params": "params.message is defined and params.message.startswith('DROP')",
                    },
                }
            )
        else:
            out.append(written(i))
    return out


class Remote:
    """A Coach already running (e.g. `make cluster` behind its proxy), driven as LiveServer is: a bearer token of
    the given admin, made once."""

    def __init__(self, base_url: str, email: str, password: str):
        import requests

        self.base_url = base_url.rstrip("/")
        self.http = requests.Session()
        self.http.trust_env = False
        answer = self.http.post(
            f"{self.base_url}/api/auth/login", json={"email": email, "password": password}, timeout=10
        )
        answer.raise_for_status()
        made = self.http.post(
            f"{self.base_url}/api/auth/tokens",
            json={"name": "bench"},
            headers={"X-CSRF-Token": answer.json()["csrf_token"]},
            timeout=10,
        )
        made.raise_for_status()
        self.token = made.json()["token"]
        self.http = requests.Session()  # the token alone from here, as a script would
        self.http.trust_env = False
        self.http.headers["Authorization"] = f"Bearer {self.token}"

    def post(self, path: str, json=None):
        return self.http.post(f"{self.base_url}{path}", json=json, timeout=30)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.http.close()


def process_cpu_s(pid: int) -> float:
    """The CPU time (user + system, its own threads included) a running process has used: /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14 and 15)


def coach_server(
    concurrency: int,
    async_mode: str,
    folder: str,
    think_ms: float = 0.0,
    remote: Remote | None = None,
    workspace_room: bool = False,
    root: Path | None = None,
    label: str | None = None,
    python: str | None = None,
) -> dict:
    """(b): `root` is the checkout whose server runs (default this one) with the interpreter `python` (default
    this one's), `label` the row's name."""
    import socketio

    from tests.support.live_server import LiveServer

    server = remote or LiveServer(Path(folder), async_mode=async_mode, root=root, python=python)
    server.start()
    try:
        wf_id = server.post("/api/workflows", json=WORKFLOW).json()["id"]
        ids = [
            server.post("/api/executions/coaching", json={"workflow_id": wf_id}).json()["execution_id"]
            for _ in range(concurrency)
        ]
        lock = threading.Lock()
        latencies: list[float] = []
        finished = threading.Event()
        remaining = {"n": concurrency}
        clients = []
        refused: list[tuple[str, str, Any]] = []  # (what, execution id, the server's error answer): shown if stuck

        def answered(what: str, execution_id: str):
            def check(ack=None):
                if not (isinstance(ack, dict) and ack.get("ok", True) and "error" not in ack):
                    refused.append((what, execution_id, ack))

            return check

        def drive(execution_id: str):
            client = socketio.Client(reconnection=False)
            state = {"sent": None, "seen": set(), "decided": 0}

            def decide(suggestion):
                if think_ms:  # operators are not in lockstep: 0.5x to 1.5x the mean think time
                    time.sleep(think_ms / 1000 * random.uniform(0.5, 1.5))
                state["sent"] = time.perf_counter()
                client.emit(
                    "coaching_decision",
                    {"execution_id": execution_id, "decision": "accept", "suggestion_id": suggestion["suggestion_id"]},
                    callback=answered("decision", execution_id),
                )

            @client.on("coaching_suggestion")
            def on_suggestion(suggestion):
                if suggestion["execution_id"] != execution_id or suggestion["suggestion_id"] in state["seen"]:
                    return
                state["seen"].add(suggestion["suggestion_id"])
                if state["sent"] is not None:
                    with lock:
                        latencies.append((time.perf_counter() - state["sent"]) * 1000)
                threading.Thread(target=decide, args=(suggestion,), daemon=True).start()

            @client.on("execution_update")
            def on_update(update):
                if update["execution_id"] == execution_id and update["status"] == "completed":
                    if state["sent"] is not None and state["decided"] == 0:
                        state["decided"] = 1
                        with lock:
                            latencies.append((time.perf_counter() - state["sent"]) * 1000)
                            remaining["n"] -= 1
                            if remaining["n"] == 0:
                                finished.set()

            client.connect(server.base_url, transports=["websocket"], wait_timeout=10, auth={"token": server.token})
            clients.append(client)
            return client

        for execution_id in ids:
            drive(execution_id)
        # the server's CPU over the decisions (its joins included): what its clients cost it, whatever they cost
        # themselves (with every client in the workspace room, the bench's own process is the bottleneck)
        process = getattr(server, "process", None)
        cpu_before = process_cpu_s(process.pid) if process is not None else None
        started = time.perf_counter()
        for client, execution_id in zip(clients, ids, strict=False):
            if workspace_room:  # as the web app's layout does on every page (its notifications)
                client.emit("join_workspace", {}, callback=answered("join_workspace", execution_id))
            client.emit(
                "join_execution",
                {"execution_id": execution_id},  # sends the pending suggestion
                callback=answered("join", execution_id),
            )
            if think_ms:  # operators sit down over one think time, not all in the same millisecond
                time.sleep(think_ms / 1000 / concurrency)
        if not finished.wait(300):
            raise RuntimeError(f"{remaining['n']} executions did not complete in time; refused: {refused[:10]}")
        seconds = time.perf_counter() - started
        cpu = process_cpu_s(process.pid) - cpu_before if process is not None and cpu_before is not None else None
        # all at once: under the threading server a client's disconnect can wait seconds for the close handshake
        with ThreadPoolExecutor(max_workers=len(clients) or 1) as pool:
            list(pool.map(lambda c: c.disconnect(), clients))
        return summary(
            label or (f"coach cluster ({remote.base_url})" if remote else f"coach server ({async_mode})"),
            latencies,
            seconds,
            concurrency=concurrency,
            think_ms=think_ms,
            **({"workspace_room": True} if workspace_room else {}),
            **({"server_cpu_ms": round(cpu * 1000 / len(latencies), 3)} if cpu is not None and latencies else {}),
        )
    finally:
        server.stop()


def push_latency(folder: str, message_queue: str = "", executions: int = 10) -> dict:
    """One operator at a time: a decision sent over the socket -> the next suggestion received on it, through the
    Socket.IO message queue (Redis) or without. What an operator waits for, without contention."""
    import socketio

    from tests.support.live_server import LiveServer

    env = {"COACH_MESSAGE_QUEUE": message_queue} if message_queue else {}
    server = LiveServer(Path(folder), env=env)
    server.start()
    latencies: list[float] = []
    try:
        wf_id = server.post("/api/workflows", json=WORKFLOW).json()["id"]
        for _ in range(executions):
            execution_id = server.post("/api/executions/coaching", json={"workflow_id": wf_id}).json()["execution_id"]
            client = socketio.Client(reconnection=False)
            arrived, box = threading.Event(), {"seen": set()}

            @client.on("coaching_suggestion")
            def on_suggestion(suggestion, execution_id=execution_id, box=box, arrived=arrived):
                if suggestion["execution_id"] == execution_id and suggestion["suggestion_id"] not in box["seen"]:
                    box["seen"].add(suggestion["suggestion_id"])
                    box["at"], box["current"] = time.perf_counter(), suggestion
                    arrived.set()

            client.connect(server.base_url, transports=["websocket"], wait_timeout=10, auth={"token": server.token})
            client.emit("join_execution", {"execution_id": execution_id})
            if not arrived.wait(10):
                raise RuntimeError("no first suggestion")
            for _ in range(STEPS - 1):
                arrived.clear()
                sent = time.perf_counter()
                client.emit(
                    "coaching_decision",
                    {
                        "execution_id": execution_id,
                        "decision": "accept",
                        "suggestion_id": box["current"]["suggestion_id"],
                    },
                )
                if not arrived.wait(10):
                    raise RuntimeError("no next suggestion")
                latencies.append((box["at"] - sent) * 1000)
            client.disconnect()
    finally:
        server.stop()
    return summary(
        "push, message queue" if message_queue else "push, no queue", latencies, sum(latencies) / 1000, concurrency=1
    )


def _redis_answers(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1).ping())
    except Exception:
        return False


def against_label(revision: str, mode: str) -> str:
    """The table's name for a server run of the --against revision."""
    return f"  at {revision[:12]} ({mode})"


def print_table(rows: list[dict]) -> None:
    rows = [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    print(f"{'engine':<28}{'decisions':>10}{'seconds':>9}{'dec/s':>9}{'p50 ms':>9}{'p99 ms':>9}  notes")
    for r in rows:
        notes = ", ".join(
            f"{k}={r[k]}"
            for k in ("executions", "rounds", "concurrency", "think_ms", "workspace_room", "server_cpu_ms")
            if k in r
        )
        print(
            f"{r['engine']:<28}{r['decisions']:>10}{r['seconds']:>9}{r['decisions_per_s']:>9}"
            f"{r['p50_ms']:>9}{r['p99_ms']:>9}  {notes}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=100, help="in-process executions (10 decisions each)")
    parser.add_argument("--concurrency", type=int, default=100, help="concurrent socket-driven executions")
    parser.add_argument("--modes", default="threading,gevent,eventlet", help="async modes for the server part")
    parser.add_argument("--think-ms", type=float, default=0.0, help="operator think time before each decision")
    parser.add_argument(
        "--skip", default="", help="comma list of parts to skip: inprocess,langgraph,server,push,statements"
    )
    parser.add_argument(
        "--pg-url",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="an administrative PostgreSQL URL for the statements part (it makes a database of its own there)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=10,
        help="the in-process engines take turns, each running executions/rounds per turn",
    )
    parser.add_argument(
        "--policy-rules", default="0,200", help="in-process runs with these numbers of policy rules in the workspace"
    )
    parser.add_argument(
        "--message-queue",
        default="redis://127.0.0.1:6379/15",
        help="the Redis of the push part's run through the message queue",
    )
    parser.add_argument(
        "--workspace-room",
        action="store_true",
        help="the server part runs twice per mode: without, then with every socket client also in its workspace's "
        "room, as each page of the web app is (the queue's, the dashboards' and the notifications' events reach "
        "every client); each row says the server's CPU per decision, and the two are compared",
    )
    parser.add_argument(
        "--against",
        default="",
        help="a git revision (e.g. the previous main) whose server the server part runs too, right "
        "after this one's, from a temporary worktree with this checkout's Python (or --against-python)",
    )
    parser.add_argument(
        "--against-python",
        default="",
        help="the interpreter of the --against server, for a revision pinned to other libraries (e.g. mcp 1.x "
        "before 2.x: a venv made from that revision's requirements.txt)",
    )
    parser.add_argument(
        "--server-runs",
        type=int,
        default=1,
        help="how many times the server part runs (this checkout and --against taking turns)",
    )
    parser.add_argument(
        "--cluster",
        default="",
        help="also drive a running Coach at this URL (make cluster: http://127.0.0.1:8000) as the "
        "server part does, logged in as COACH_ADMIN_EMAIL / COACH_ADMIN_PASSWORD (default: "
        "the demo admin)",
    )
    args, _ = parser.parse_known_args()  # the agent bench (bench/agent_overhead.py) reads the rest
    skip = set(filter(None, args.skip.split(",")))
    rooms = (False, True) if args.workspace_room else (False,)  # the server part without and with the room
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # The in-process engines take turns, each running a slice of its executions per round: whatever else slows
        # this shared machine down for a while slows every engine, not only the one that happened to run then.
        turns = {}
        rounds = max(1, min(args.rounds, args.executions))
        if "inprocess" not in skip:
            for n in sorted({int(x) for x in args.policy_rules.split(",") if x.strip()} | {0}):
                turns[f"coach-{n}"] = coach_turns(args.executions, f"{tmp}/coach-{n}.db", n, rounds)
        if "langgraph" not in skip:
            from bench.langgraph_baseline import langgraph_turns

            turns["langgraph"] = langgraph_turns(args.executions, f"{tmp}/langgraph.db", rounds=rounds)
        rows += take_turns(turns)
        if "server" not in skip:
            with checkout(args.against, tmp) as other:
                for _ in range(args.server_runs):  # this server and the other revision's take turns
                    for mode in filter(None, args.modes.split(",")):
                        for room in rooms:
                            rows.append(
                                coach_server(
                                    args.concurrency,
                                    mode,
                                    tempfile.mkdtemp(dir=tmp),
                                    args.think_ms,
                                    workspace_room=room,
                                )
                            )
                            if other is not None:
                                rows.append(
                                    coach_server(
                                        args.concurrency,
                                        mode,
                                        tempfile.mkdtemp(dir=tmp),
                                        args.think_ms,
                                        workspace_room=room,
                                        root=other,
                                        label=against_label(args.against, mode),
                                        python=args.against_python or None,
                                    )
                                )
        if "push" not in skip:  # decision -> next suggestion on the socket, without and with the message queue
            rows.append(push_latency(tempfile.mkdtemp(dir=tmp)))
            if _redis_answers(args.message_queue):
                rows.append(push_latency(tempfile.mkdtemp(dir=tmp), args.message_queue))
            else:
                print(f"push through the message queue skipped: Redis at {args.message_queue} does not answer")
        if args.cluster:
            remote = Remote(
                args.cluster,
                os.environ.get("COACH_ADMIN_EMAIL", "admin@coach.local"),
                os.environ.get("COACH_ADMIN_PASSWORD", "coach-demo"),
            )
            rows.append(
                coach_server(
                    args.concurrency, "cluster", "", args.think_ms, remote=remote, workspace_room=args.workspace_room
                )
            )
    print_table(rows)
    if args.workspace_room and "server" not in skip:
        for mode in filter(None, args.modes.split(",")):
            for engine in (f"coach server ({mode})", against_label(args.against, mode) if args.against else None):
                cpu = {
                    room: [
                        r["server_cpu_ms"]
                        for r in rows
                        if r["engine"] == engine and r.get("workspace_room", False) is room
                    ]
                    for room in (False, True)
                }
                if engine and all(cpu.values()):
                    without, within = sum(cpu[False]) / len(cpu[False]), sum(cpu[True]) / len(cpu[True])
                    print(
                        f"{engine}: server CPU per decision {without:.2f} ms without the workspace room, "
                        f"{within:.2f} ms with all {args.concurrency} clients in it ({within / without:.2f}x; "
                        f"target <= 1.2x)"
                    )
    if args.against and "server" not in skip:
        for mode in filter(None, args.modes.split(",")):
            for room in rooms:  # (the runs with the workspace room apart from those without)

                def rates(engine: str, room: bool = room) -> list[float]:
                    return [
                        r["decisions_per_s"]
                        for r in rows
                        if r["engine"] == engine and r.get("workspace_room", False) is room
                    ]

                ours, theirs = rates(f"coach server ({mode})"), rates(against_label(args.against, mode))
                if ours and theirs:
                    print(
                        f"{mode}{' with the workspace room' if room else ''}: this checkout at "
                        f"{sum(ours) / sum(theirs):.0%} of {args.against}'s decisions/s ({len(ours)} runs each)"
                    )
    if "statements" not in skip:
        counted = statements_per_decision(args.pg_url)
        print(
            f"\nPostgreSQL, statements per decision (accept + the next suggestion, one transaction): "
            f"p50 {counted['statements_p50']}, max {counted['statements_max']} over {counted['decisions']} "
            f"decisions (parameter sets p50 {counted['parameter_sets_p50']}); one of them:"
        )
        for statement in counted["example"]:
            print(f"  {statement}")
    coach = next((r for r in rows if r["engine"] == "coach"), None)
    lang = next((r for r in rows if r["engine"] == "langgraph"), None)
    ruled = [r for r in rows if r.get("policy_rules")]
    for r in ruled:
        if coach:
            print(
                f"in-process with {r['policy_rules']} policy rules: {r['decisions_per_s']} decisions/s, "
                f"{r['decisions_per_s'] / coach['decisions_per_s']:.1%} of the rate with none (target >= 90%)"
            )
    if coach and lang:
        print(
            f"\nin-process: Coach / LangGraph decisions per second = "
            f"{coach['decisions_per_s'] / lang['decisions_per_s']:.2f}x (target >= 2x)"
        )


if __name__ == "__main__":
    main()
