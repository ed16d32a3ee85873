"""The MCP gateway's overhead on an allowed call: `tools/call` through Coach's /mcp against the same call made
directly to the upstream server, both with the official MCP Python SDK client and one session each, one call at a
time.

Coach runs as `python wsgi.py` (gevent, SQLite) with the project's own FastMCP server over stdio as the upstream
(tests/support/mcp_servers.py, tool `add`), allowed for agents by a policy rule. The direct session starts the same
server over stdio. Overhead = the gateway's latency - the direct latency, per percentile. What the gateway adds per
call: HTTP + SSE to Coach, authentication (one SELECT), the policy's verdict (one read session), the forwarding
through the client pool, and the audit event (one write transaction).
Target (issue 32): overhead p50 <= 2 ms, p99 <= 10 ms.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.stats import percentile  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402
from tests.support.mcp_servers import stdio_command  # noqa: E402

SHOP = stdio_command("shop")


async def timed(session: ClientSession, calls: int, warmup: int) -> list[float]:
    out = []
    for i in range(warmup + calls):
        start = time.perf_counter()
        result = await session.call_tool("add" if session.direct else "shop.add", {"a": i, "b": 1})
        took = time.perf_counter() - start
        assert not result.isError, result
        if i >= warmup:
            out.append(took * 1000)
    return out


async def direct(calls: int, warmup: int) -> list[float]:
    params = StdioServerParameters(command=SHOP[0], args=SHOP[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        session.direct = True
        return await timed(session, calls, warmup)


async def gateway(server: LiveServer, token: str, calls: int, warmup: int) -> list[float]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, trust_env=False) as http, \
            streamable_http_client(server.url("/mcp"), http_client=http) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        session.direct = False
        return await timed(session, calls, warmup)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = LiveServer(Path(folder) / "server", env={"COACH_MCP_STDIO_ALLOW": " ".join(SHOP),
                                                         "COACH_LOG_LEVEL": "WARNING"})
        try:
            server.start()
            made = server.http.post(server.url("/api/tool-servers"), json={
                "name": "shop", "transport": "stdio", "command": SHOP, "trusted": True}, timeout=30).json()
            server.http.post(server.url(f"/api/tool-servers/{made['id']}/refresh"), timeout=60).raise_for_status()
            server.http.post(server.url("/api/policies"), json={
                "name": "bench", "effect": "allow", "match": {"tool": "shop.add", "agent": "*"}}, timeout=10
            ).raise_for_status()
            token = server.http.post(server.url("/api/agents"), json={"name": "bench"}, timeout=10).json()["token"]
            cpu_before = cpu_seconds(server.process.pid)
            through = asyncio.run(gateway(server, token, args.calls, args.warmup))
            cpu_per_call = (cpu_seconds(server.process.pid) - cpu_before) * 1000 / (args.calls + args.warmup)
        finally:
            server.stop()
            server.http.close()
    straight = asyncio.run(direct(args.calls, args.warmup))
    print(f"{args.calls} allowed calls, one at a time (ms)   p50      p90      p99")
    for name, values in (("direct to the server (stdio)", straight), ("through Coach's /mcp", through)):
        print(f"  {name:<34} {percentile(values, 50):7.2f}  {percentile(values, 90):7.2f}  {percentile(values, 99):7.2f}")
    print(f"  {'overhead':<34} {percentile(through, 50) - percentile(straight, 50):7.2f}  "
          f"{percentile(through, 90) - percentile(straight, 90):7.2f}  "
          f"{percentile(through, 99) - percentile(straight, 99):7.2f}")
    print(f"  Coach's CPU per call (its process, user + system; steadier than latency on a busy machine): "
          f"{cpu_per_call:.2f} ms")


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (Linux: /proc/<pid>/stat, user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
