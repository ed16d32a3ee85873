"""MCP servers of the project's own, built with the official SDK (2.x: MCPServer, formerly FastMCP), for the tests.
They answer both eras: 2026-07-28 (server/discover) and the initialize handshake of the earlier revisions.

    python -m tests.support.mcp_servers shop               # over stdio
    python -m tests.support.mcp_servers shop --http PORT   # streamable HTTP on 127.0.0.1:PORT/mcp
    python -m tests.support.mcp_servers broken             # a server whose tool has an invalid JSON Schema

`shop` offers: `lookup` (read-only, structured output), `add` (plain text), `refund` (an enum and a number:
a form the correction editor renders; no annotations, so destructive and open-world by the protocol's
defaults), `fail` (isError), `crash` (the process dies mid-call), `hang` (sleeps past any timeout without
giving the server's loop back), `slow` (sleeps, politely), `toggle_beta` (adds or removes the tool `beta`
and tells the client: notifications/tools/list_changed on a handshake-era session, or on a 2026-07-28 client's
subscriptions/listen stream).

HttpMcpServer runs one in a subprocess for a test; stdio servers are started by the client itself.
"""

import argparse
import asyncio
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError  # its message reaches the client (others are hidden)
from mcp.types import ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel

REPO_ROOT = Path(__file__).resolve().parents[2]


class Order(BaseModel):
    order_id: str
    customer: str
    total: float
    status: str


ORDERS = {
    "A-1001": {"order_id": "A-1001", "customer": "Ada", "total": 120.5, "status": "delivered"},
    "A-1002": {"order_id": "A-1002", "customer": "Grace", "total": 42.0, "status": "lost"},
}


def shop_server(name: str = "shop", **settings):
    mcp = MCPServer(name, **settings)

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def lookup(order_id: str) -> Order:
        """Look an order up by its id."""
        order = ORDERS.get(order_id)
        if order is None:
            raise ToolError(f"no order {order_id}")
        return Order(**order)

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False))
    def add(a: int, b: int) -> str:
        """Add two numbers (answers in text)."""
        return f"{a + b}"

    @mcp.tool()
    def refund(order_id: str, amount: float, reason: Literal["damaged", "lost", "late"] = "damaged") -> dict:
        """Refund part of an order."""
        return {"order_id": order_id, "refunded": amount, "reason": reason}

    @mcp.tool()
    def fail(message: str = "the tool failed") -> str:
        """Always fails with the given message."""
        raise ToolError(message)

    @mcp.tool()
    def crash() -> str:
        """Kills the server process in the middle of the call."""
        os._exit(3)

    @mcp.tool()
    async def hang(seconds: float = 3600) -> str:
        """Blocks the whole server (a synchronous sleep on its loop: the SDK runs sync tools on a worker thread)."""
        time.sleep(seconds)
        return "woke up"

    @mcp.tool()
    async def slow(seconds: float = 1.0) -> str:
        """Sleeps without blocking the server."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @mcp.tool()
    def echo_meta(ctx: Context) -> dict:
        """Returns the request's _meta (what the client sent along with the call)."""
        meta = ctx.request_context.meta
        return {"meta": dict(meta) if meta is not None else None}

    tallies: dict[str, int] = {}

    @mcp.tool()
    def tally(label: str) -> str:
        """Counts its calls per label (in this process): how many times a call really ran."""
        tallies[label] = tallies.get(label, 0) + 1
        return str(tallies[label])

    beta = {"present": False}

    @mcp.tool()
    async def toggle_beta(ctx: Context) -> str:
        """Adds the tool `beta` when it is absent, removes it when present; tells the client the list changed."""
        if not beta["present"]:
            mcp.add_tool(lambda: "beta here", name="beta", description="Appears and disappears.")
            state = "added"
        else:
            mcp.remove_tool("beta")
            state = "removed"
        beta["present"] = not beta["present"]
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await ctx.session.send_tool_list_changed()
        else:
            await ctx.notify_tools_changed()
        return state

    return mcp


def broken_server():
    """A low-level server (the SDK's `Server`) whose tool `bad` has a schema that is not a JSON Schema."""
    import mcp.types as types
    from mcp.server import Server

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name="bad",
                    description="A tool with a broken schema",
                    input_schema={"type": "object", "properties": {"x": {"type": "no-such-type"}}},
                ),
                types.Tool(name="ok", description="A fine tool", input_schema={"type": "object"}),
            ]
        )

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} called")])

    return Server("broken", on_list_tools=list_tools, on_call_tool=call_tool)


async def _run_lowlevel_stdio(server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=("shop", "broken"))
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port (default: stdio)")
    parser.add_argument("--name", default="shop")
    args = parser.parse_args(argv)
    if args.kind == "broken":
        asyncio.run(_run_lowlevel_stdio(broken_server()))
        return
    if args.http:
        shop_server(args.name, log_level="WARNING").run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        shop_server(args.name, log_level="WARNING").run("stdio")


def stdio_command(kind: str = "shop") -> list[str]:
    """The command line that starts a test server over stdio (what a tool server's `command` holds)."""
    return [sys.executable, str(Path(__file__).resolve()), kind]


class HttpMcpServer:
    """`shop` over streamable HTTP in a subprocess on a free loopback port: `with HttpMcpServer(tmp) as s: s.url`."""

    def __init__(self, folder: str | os.PathLike, name: str = "shop", command: list[str] | None = None):
        """`command`: another server's command line taking the same `--http PORT --name NAME` (a 1.x-era one:
        tests/support/mcp1.py mcp1_server_command)."""
        from tests.support.live_server import free_port

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.command = command or [sys.executable, "-m", "tests.support.mcp_servers", "shop"]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen | None = None

    def start(self) -> "HttpMcpServer":
        log = open(self.folder / f"mcp-{self.port}.log", "wb")
        self.process = subprocess.Popen(
            [*self.command, "--http", str(self.port), "--name", self.name],
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        import socket

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"MCP test server exited: {(self.folder / f'mcp-{self.port}.log').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("MCP test server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def __enter__(self) -> "HttpMcpServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    main()


@contextmanager
def server_with_shop(request, directory, *, trusted: bool, env: dict[str, str], policies: list[dict]):
    """A live Coach (SQLite, or PostgreSQL when `request.param` says so) with the scripted `shop` MCP server added and
    its tools listed, and the given policy rules made: the gateway's live tests start from here."""
    from tests.support.gateway_agents import add_stdio_server
    from tests.support.live_server import LiveServer

    shop = stdio_command("shop")
    database_url = None
    if request.param == "postgresql":
        database_url = request.getfixturevalue("pg_database")
        request.getfixturevalue("pg_emptier")()
    with LiveServer(directory, database_url, env={"COACH_MCP_STDIO_ALLOW": " ".join(shop), **env}) as live:
        add_stdio_server(live, "shop", shop, trusted=trusted)
        for body in policies:
            assert live.http.post(live.url("/api/policies"), json=body, timeout=10).status_code == 201
        yield live
