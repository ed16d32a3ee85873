"""The MCP gateway's overhead on an allowed call: `tools/call` through Coach's /mcp against the same call made
directly to the upstream server, both with the official MCP Python SDK client and one session each, one call at a
time.

Coach runs as `python wsgi.py` (gevent, SQLite), which starts its MCP process (asgi.py, uvicorn: the gateway), with
the project's own FastMCP server over stdio as the upstream (tests/support/mcp_servers.py, tool `add`), allowed for
agents by a policy rule. The gateway is timed twice: at the MCP process's own port (what `make cluster`'s nginx routes
/mcp to) and at the web process's /mcp (`make run`'s one URL: the web process proxies it). The direct session starts
the same server over stdio. Overhead = the gateway's latency - the direct latency, per percentile. What the gateway
adds per call: HTTP + SSE to Coach, authentication (one SELECT), the policy's verdict (one read session), the
forwarding through the client pool, and the audit event (one write transaction).
Target (issue 32): overhead p50 <= 2 ms, p99 <= 10 ms.

Then held calls (`--agents 100`, 0 skips it): a policy makes `shop.refund` need a review, that many agent identities
each open their own session and call it at once, and a reviewer (on the REST API, as a script of a team lead would,
with REVIEWERS threads) approves every review as it appears in the pending list. Printed: the held calls answered per
second from
the moment they are sent (every agent's session open) to the last answer, and per call the time from its approval to
the agent's answer (a decision made on the server holding the call wakes it; COACH_GATEWAY_POLL_S is for one made on
another server).
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
import requests  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.stats import percentile  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402
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
    pids = (server.process.pid, server.mcp_pid()) if proxied else (server.mcp_pid(),)
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
    args = parser.parse_args()
    held = None
    with tempfile.TemporaryDirectory() as folder:
        server = LiveServer(
            Path(folder) / "server", env={"COACH_MCP_STDIO_ALLOW": " ".join(SHOP), "COACH_LOG_LEVEL": "WARNING"}
        )
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
            through, through_pings, cpu = asyncio.run(gateway(server, token, args.calls, args.warmup, False))
            proxied, proxied_pings, proxied_cpu = asyncio.run(gateway(server, token, args.calls, args.warmup, True))
            if args.agents:
                held = held_calls(server, args.agents)
        finally:
            server.stop()
            server.http.close()
    straight, straight_pings, _ = asyncio.run(direct(args.calls, args.warmup))
    for what, there, here, via in (
        ("allowed calls", straight, through, proxied),
        ("pings", straight_pings, through_pings, proxied_pings),
    ):
        print(f"{args.calls} {what}, one at a time (ms)   p50      p90      p99")
        for name, values in (
            ("direct to the server (stdio)", there),
            ("through Coach's MCP process", here),
            ("through the web process's /mcp", via),
        ):
            print(
                f"  {name:<34} {percentile(values, 50):7.2f}  {percentile(values, 90):7.2f}  "
                f"{percentile(values, 99):7.2f}"
            )
        for name, values in (("overhead (MCP process)", here), ("overhead (web process's /mcp)", via)):
            print(
                f"  {name:<34} {percentile(values, 50) - percentile(there, 50):7.2f}  "
                f"{percentile(values, 90) - percentile(there, 90):7.2f}  "
                f"{percentile(values, 99) - percentile(there, 99):7.2f}"
            )
    print(
        f"  Coach's CPU (user + system; steadier than latency on a busy machine): the MCP process {cpu[0]:.2f} ms "
        f"per call, {cpu[1]:.2f} ms per ping; both processes through the web's /mcp {proxied_cpu[0]:.2f} ms per "
        f"call, {proxied_cpu[1]:.2f} ms per ping"
    )
    if held is not None:
        took, after = held
        print(
            f"{args.agents} agents calling a held tool at once (their sessions open), every review approved by a "
            f"script ({REVIEWERS} threads) as it appears:"
        )
        print(
            f"  all held, approved and answered in {took:.2f} s: {args.agents / took:.1f} held calls/s; approval -> "
            f"the agent's answer p50 {percentile(after, 50):.0f} ms, p99 {percentile(after, 99):.0f} ms"
        )


def held_calls(server: LiveServer, agents: int) -> tuple[float, list[float]]:
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
    stop = threading.Event()

    local = threading.local()

    def approve(item: dict) -> None:
        if not hasattr(local, "http"):  # a session per reviewer thread, signed in as the bench's admin
            local.http = requests.Session()
            local.http.headers.update(server.http.headers)
            local.http.cookies.update(server.http.cookies)
        local.http.post(
            server.url(f"/api/approvals/{item['approval_id']}"), json={"decision": "approve"}, timeout=30
        ).raise_for_status()
        approved_at[item["agent"]] = time.perf_counter()

    def reviewer() -> None:
        seen: set[str] = set()
        with concurrent.futures.ThreadPoolExecutor(REVIEWERS) as pool:
            while not stop.is_set() and len(seen) < agents:
                page = server.http.get(server.url("/api/approvals?status=pending&per_page=100"), timeout=30).json()
                fresh = [i for i in page["items"] if i["kind"] == "gateway" and i["agent"] not in seen]
                seen.update(i["agent"] for i in fresh)
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
            Client(streamable_http_client(server.mcp_url + "/mcp", http_client=http), cache=None) as session,
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
    return max(answered) - started, [(t - approved_at[name]) * 1000 for name, t in zip(tokens, answered, strict=False)]


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (Linux: /proc/<pid>/stat, user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
