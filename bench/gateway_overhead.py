"""The MCP gateway's overhead on an allowed call: `tools/call` through Coach's /mcp against the same call made
directly to the upstream server, both with the official MCP Python SDK client and one session each, one call at a
time.

Coach runs as `python wsgi.py` (gevent; SQLite, or PostgreSQL with `--postgresql`), which starts its MCP process
(asgi.py, uvicorn: the gateway), with the project's own FastMCP server over stdio as the upstream
(tests/support/mcp_servers.py, tool `add`), allowed for agents by a policy rule. The gateway is timed twice: at the MCP
process's own port (what `make cluster`'s nginx routes /mcp to) and at the web process's /mcp (`make run`'s one URL:
the web process proxies it). The direct session starts the same server over stdio. Overhead = the gateway's latency -
the direct latency, per percentile. What the gateway adds per call: HTTP + SSE to Coach, authentication (one SELECT),
the policy's verdict (one read session), the forwarding through the client pool, and the audit event (one write
transaction). Targets (issue 42): overhead p50 <= 2 ms, p99 <= 10 ms; a ping's <= 1 ms.

Then held calls (`--agents 100`, 0 skips it): a policy makes `shop.refund` need a review, that many agent identities
each open their own session and call it at once, and a reviewer (on the REST API, as a script of a team lead would,
with REVIEWERS threads) approves every review as it appears in the pending list. Printed: the held calls answered per
second from the moment they are sent (every agent's session open) to the last answer, and per call the time from its
approval to the agent's answer (a decision made on the server holding the call wakes it; COACH_GATEWAY_POLL_S is for
one made on another server). Target (issue 42): >= 100 held calls/s.

`--against REV` measures REV's server the same way in the same run, right after this checkout's (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
import requests  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.revisions import checkout  # noqa: E402
from bench.stats import percentile  # noqa: E402
from tests.support.live_server import LiveServer, LiveServerError  # noqa: E402
from tests.support.mcp_servers import stdio_command  # noqa: E402

SHOP = stdio_command("shop")
REVIEWERS = 4  # the held-call part's reviewer threads (a lead's script approving from the REST API)


async def timed(
    session: Client, calls: int, warmup: int, pids: tuple[int, ...] = (), direct: bool = False
) -> tuple[list[float], ...]:
    """The calls' latencies, then as many pings' (an MCP request that the SDK answers itself: no judging, no
    forwarding, no audit; through Coach, what its HTTP serving, the bearer token's check and the SDK cost alone);
    with `pids`, those processes' CPU ms per call and per ping too."""

    def cpu_now() -> float:
        return sum(cpu_seconds(pid) for pid in pids)

    out, pings, cpu = [], [], [cpu_now()]
    for i in range(warmup + calls):
        start = time.perf_counter()
        result = await session.call_tool("add" if direct else "shop.add", {"a": i, "b": 1})
        took = time.perf_counter() - start
        assert not result.is_error, result
        if i >= warmup:
            out.append(took * 1000)
    cpu.append(cpu_now())
    for i in range(warmup + calls):
        start = time.perf_counter()
        await session.session.send_ping()  # the handshake era's ping (2026-07-28 has none): mode='legacy' below
        if i >= warmup:
            pings.append((time.perf_counter() - start) * 1000)
    cpu.append(cpu_now())
    per = [(b - a) * 1000 / (warmup + calls) for a, b in zip(cpu, cpu[1:], strict=False)]
    return out, pings, per


async def direct(calls: int, warmup: int) -> tuple[list[float], list[float]]:
    params = StdioServerParameters(command=SHOP[0], args=SHOP[1:])
    async with Client(params, mode="legacy", cache=None) as session:
        return await timed(session, calls, warmup, direct=True)


async def gateway(server: LiveServer, token: str, calls: int, warmup: int, proxied: bool) -> tuple[list[float], ...]:
    """At the MCP process's own port, or (`proxied`) at the web process's /mcp; CPU of the processes that serve it."""
    url = server.url("/mcp") if proxied else server.mcp_url + "/mcp"
    pids = (server.process.pid, *children(server)) if proxied else (server.mcp_pid(),)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, trust_env=False) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None) as session,
    ):
        return await timed(session, calls, warmup, pids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--agents", type=int, default=100, help="agents calling a held tool at once (0: skip)")
    parser.add_argument(
        "--against",
        default="",
        help="a git revision (e.g. the previous main) whose server is measured the same way right after this one's, "
        "from a temporary worktree with this checkout's Python (or --against-python); a revision without an MCP "
        "process of its own (no asgi.py) is measured at its /mcp only",
    )
    parser.add_argument("--against-python", default="", help="the interpreter of the --against server")
    parser.add_argument(
        "--postgresql",
        default="",
        metavar="ADMIN_URL",
        help="the servers run on a database of their own made on this PostgreSQL (e.g. "
        "postgresql://postgres@127.0.0.1:5432/postgres; dropped after) instead of a SQLite file",
    )
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as folder, checkout(args.against, folder) as other:
        runs.append(measured("this checkout", None, None, folder, args))
        if other is not None:
            runs.append(measured(args.against[:12], other, args.against_python or None, folder, args))
    straight, straight_pings, _ = asyncio.run(direct(args.calls, args.warmup))
    database = "PostgreSQL" if args.postgresql else "SQLite"
    for what, there, key in (("allowed calls", straight, "calls"), ("pings", straight_pings, "pings")):
        print(f"{args.calls} {what}, one at a time (ms), {database}   p50      p90      p99")
        print(f"  {'direct to the server (stdio)':<46} {row(there)}")
        for run in runs:
            for where, values in run[key].items():
                print(f"  {run['label'] + ': ' + where:<46} {row(values)}")
        for run in runs:
            for where, values in run[key].items():
                print(f"  {run['label'] + ': overhead, ' + where:<46} {row(values, there)}")
    for run in runs:
        print(
            f"  {run['label']}: Coach's CPU (user + system; steadier than latency on a busy machine), ms per call / "
            "per ping: " + "; ".join(f"{where} {cpu[0]:.2f} / {cpu[1]:.2f}" for where, cpu in run["cpu"].items())
        )
    for run in runs:
        if run["held"] is not None:
            took, after, posts, held_s = run["held"]
            print(
                f"{run['label']}: {args.agents} agents calling a held tool at once (their sessions open, at "
                f"{run['held_at']}), every review approved by a script ({REVIEWERS} threads) as it appears: all "
                f"answered in {took:.2f} s: {args.agents / took:.1f} held calls/s; approval -> the agent's answer "
                f"p50 {percentile(after, 50):.0f} ms, p99 {percentile(after, 99):.0f} ms; every call held and listed "
                f"after {held_s:.2f} s; an approval's POST p50 {percentile(posts, 50):.0f} ms, "
                f"p99 {percentile(posts, 99):.0f} ms"
            )


def row(values: list[float], minus: list[float] | None = None) -> str:
    """p50, p90, p99 of `values` (less those of `minus`: the overhead over the direct call)."""
    return "  ".join(f"{percentile(values, q) - (percentile(minus, q) if minus else 0):7.2f}" for q in (50, 90, 99))


def measured(label: str, root: Path | None, python: str | None, folder: str, args) -> dict:
    """One server's figures: calls and pings at its MCP process's port (when the revision has one) and at the web
    process's /mcp, the processes' CPU, the held calls."""
    own = (root or ROOT) / "asgi.py"
    with database(args.postgresql) as url:
        server = LiveServer(
            tempfile.mkdtemp(dir=folder),
            url,
            env={"COACH_MCP_STDIO_ALLOW": " ".join(SHOP), "COACH_LOG_LEVEL": "WARNING"},
            root=root,
            python=python,
        )
        out: dict = {"label": label, "calls": {}, "pings": {}, "cpu": {}, "held": None}
        try:
            server.start()
            made = server.http.post(
                server.url("/api/tool-servers"),
                json={"name": "shop", "transport": "stdio", "command": SHOP, "trusted": True},
                timeout=30,
            ).json()
            server.http.post(server.url(f"/api/tool-servers/{made['id']}/refresh"), timeout=60).raise_for_status()
            server.http.post(
                server.url("/api/policies"),
                json={"name": "bench", "effect": "allow", "match": {"tool": "shop.add", "agent": "*"}},
                timeout=10,
            ).raise_for_status()
            token = server.http.post(server.url("/api/agents"), json={"name": "bench"}, timeout=10).json()["token"]
            places = (("the MCP process", False), ("the web's /mcp", True)) if own.exists() else (("/mcp", True),)
            for where, proxied in places:
                calls, pings, cpu = asyncio.run(gateway(server, token, args.calls, args.warmup, proxied))
                out["calls"][where], out["pings"][where], out["cpu"][where] = calls, pings, cpu
            if args.agents:
                out["held_at"] = places[0][0]
                out["held"] = held_calls(server, args.agents, server.mcp_url if own.exists() else server.base_url)
        finally:
            server.stop()
            server.http.close()
    return out


@contextmanager
def database(admin_url: str) -> Iterator[str | None]:
    """A PostgreSQL database of its own for one server (dropped after), or None: the server's own SQLite file."""
    if not admin_url:
        yield None
        return
    import psycopg

    name = f"coach_bench_gw_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def held_calls(server: LiveServer, agents: int, mcp_base: str) -> tuple[float, list[float], list[float], float]:
    """`agents` identities call shop.refund (held for a review) at once; a reviewer approves each review as it shows.
    Returns the seconds from the first call to the last answer, and each call's approval -> answer in ms."""
    server.http.post(
        server.url("/api/policies"),
        json={"name": "held", "effect": "require_review", "match": {"tool": "shop.refund", "agent": "*"}},
        timeout=10,
    ).raise_for_status()
    tokens = {
        f"held-{i}": server.http.post(server.url("/api/agents"), json={"name": f"held-{i}"}, timeout=10).json()["token"]
        for i in range(agents)
    }
    approved_at: dict[str, float] = {}
    posts: list[float] = []  # each approval's POST, ms
    seen_all: list[float] = []  # when the last review showed in the pending list
    stop = threading.Event()

    local = threading.local()

    def approve(item: dict) -> None:
        if not hasattr(local, "http"):  # a session per reviewer thread, signed in as the bench's admin
            local.http = requests.Session()
            local.http.headers.update(server.http.headers)
            local.http.cookies.update(server.http.cookies)
        sent = time.perf_counter()
        local.http.post(
            server.url(f"/api/approvals/{item['approval_id']}"), json={"decision": "approve"}, timeout=30
        ).raise_for_status()
        approved_at[item["agent"]] = time.perf_counter()
        posts.append((approved_at[item["agent"]] - sent) * 1000)

    def reviewer() -> None:
        seen: set[str] = set()
        with concurrent.futures.ThreadPoolExecutor(REVIEWERS) as pool:
            while not stop.is_set() and len(seen) < agents:
                page = server.http.get(server.url("/api/approvals?status=pending&per_page=100"), timeout=30).json()
                fresh = [i for i in page["items"] if i["kind"] == "gateway" and i["agent"] not in seen]
                seen.update(i["agent"] for i in fresh)
                if len(seen) == agents and not seen_all:
                    seen_all.append(time.perf_counter())
                list(pool.map(approve, fresh))
                if not fresh:
                    time.sleep(0.05)

    ready, go = [0], None

    async def agent(name: str) -> float:
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {tokens[name]}"},
                trust_env=False,
                timeout=httpx2.Timeout(30, read=120),
            ) as http,
            Client(streamable_http_client(mcp_base + "/mcp", http_client=http), cache=None) as session,
        ):
            ready[0] += 1
            await go.wait()  # every agent's session is open: they call at once
            result = await session.call_tool("shop.refund", {"order_id": name, "amount": 1.5})
            assert not result.is_error, result
            return time.perf_counter()

    async def everyone() -> tuple[float, list[float]]:
        nonlocal go
        go = asyncio.Event()
        calls = [asyncio.ensure_future(agent(name)) for name in tokens]
        while ready[0] < agents:
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        go.set()
        thread.start()
        return started, list(await asyncio.gather(*calls))

    thread = threading.Thread(target=reviewer, daemon=True)
    try:
        started, answered = asyncio.run(everyone())
    finally:
        stop.set()
        thread.join(30)
    return (
        max(answered) - started,
        [(t - approved_at[name]) * 1000 for name, t in zip(tokens, answered, strict=False)],
        posts,
        (seen_all[0] - started) if seen_all else float("nan"),
    )


def children(server: LiveServer) -> tuple[int, ...]:
    """The server's MCP process, where its revision has one."""
    try:
        return (server.mcp_pid(),)
    except LiveServerError:
        return ()


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (Linux: /proc/<pid>/stat, user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
