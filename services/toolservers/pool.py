"""Sessions with MCP servers, pooled per server and reconnected, driven from the MCP loop thread.

`Clients.list_tools(endpoint)` and `Clients.call(endpoint, ...)` are called from request handlers and the runner
(threads or green threads); the SDK's Client runs on the loop of services/toolservers/loop.py. One
session per server configuration (an edit makes a new one); a session whose transport died (the server crashed,
the connection dropped) is replaced at the next use. A call that outlives its timeout is cancelled: the caller
gets a clear error at once, the server gets notifications/cancelled (the SDK sends it when the waiting request
is cancelled), and a server that then does not answer a
ping is disconnected (a stdio server that blocks its own loop is stopped), so nothing waits on it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

from services.toolservers.connection import (
    Connection,
    Endpoint,
    SessionGone,
    Unavailable,
    reason_of,
    while_alive,
)
from services.toolservers.loop import LoopThread

log = logging.getLogger(__name__)

PING_AFTER_TIMEOUT_S = 2.0
MAX_LIST_PAGES = 20


class Clients:
    """The pool of sessions, and the blocking (gevent-friendly) calls the rest of Coach makes."""

    def __init__(
        self,
        *,
        call_timeout: float,
        connect_timeout: float,
        on_tools: Callable[[Endpoint, list[dict[str, Any]]], None] | None = None,
    ):
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        # called on the loop with a server's new tool list after it sent notifications/tools/list_changed
        self.on_tools = on_tools or (lambda ep, tools: None)
        self.loop = LoopThread()
        self._connections: dict[str, Connection] = {}  # server id -> its live connection (touched on the loop only)
        self._opening: dict[str, asyncio.Lock] = {}

    # -- on the loop ------------------------------------------------------------------------------------------

    async def _connection(self, ep: Endpoint) -> Connection:
        lock = self._opening.setdefault(ep.server_id, asyncio.Lock())
        async with lock:
            conn = self._connections.get(ep.server_id)
            if conn is not None and conn.endpoint.key == ep.key and conn.alive:
                return conn
            if conn is not None:
                self._connections.pop(ep.server_id, None)
                await conn.close()
            conn = Connection(ep, self._list_changed, self.connect_timeout)
            await conn.open()
            self._connections[ep.server_id] = conn
            return conn

    def _list_changed(self, ep: Endpoint) -> None:
        async def relist() -> None:
            try:
                self.on_tools(ep, await self._list(ep))
            except Exception:  # noqa: BLE001 (the next refresh or call tries again)
                log.exception("listing %s's tools after tools/list_changed failed", ep.name)

        asyncio.get_running_loop().create_task(relist())

    async def _list(self, ep: Endpoint) -> list[dict[str, Any]]:
        conn = await self._connection(ep)
        tools: list[dict[str, Any]] = []
        cursor = None
        for _ in range(MAX_LIST_PAGES):
            try:
                page = await while_alive(conn, conn.session.list_tools(cursor=cursor), self.call_timeout)
            except SessionGone:
                await self._drop(ep, conn)
                raise Unavailable(f"MCP server {ep.name!r} could not be reached: {await conn.why_gone()}") from None
            except TimeoutError:
                await self._drop(ep, conn)
                raise Unavailable(
                    f"MCP server {ep.name!r} did not list its tools within {self.call_timeout:g}s"
                ) from None
            except MCPError as exc:
                if exc.error.code == CONNECTION_CLOSED:
                    await self._drop(ep, conn)
                    raise Unavailable(f"MCP server {ep.name!r} closed the connection: {await conn.why_gone()}") from exc
                raise Unavailable(f"MCP server {ep.name!r} refused to list its tools: {exc.error.message}") from exc
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._drop(ep, conn)
                raise Unavailable(f"MCP server {ep.name!r} is not connected: {await conn.why_gone()}") from None
            tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _call(
        self, ep: Endpoint, tool: str, arguments: dict[str, Any], timeout: float, meta: dict[str, Any]
    ) -> dict[str, Any]:
        # One retry, only of a request that never left, at once on a new connection: no backoff, no policy to
        # configure, so two turns of a loop say it more plainly than tenacity's AsyncRetrying would.
        for attempt in (1, 2):
            conn = await self._connection(ep)
            try:
                return await self._call_on(conn, tool, arguments, timeout, meta)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                # the session's streams were closed before the request went out: it never reached the server,
                # so one retry on a new connection cannot run the tool twice
                await self._drop(ep, conn)
                if attempt == 2:
                    raise Unavailable(f"MCP server {ep.name!r} is not connected: {await conn.why_gone()}") from None
        raise AssertionError("unreachable")

    async def _call_on(
        self, conn: Connection, tool: str, arguments: dict[str, Any], timeout: float, meta: dict[str, Any]
    ) -> dict[str, Any]:
        ep = conn.endpoint
        request = conn.session.call_tool(tool, arguments, read_timeout_seconds=timeout + 5, meta=meta or None)
        try:
            result = await while_alive(conn, request, timeout)
        except SessionGone:
            await self._drop(ep, conn)
            raise Unavailable(f"MCP server {ep.name!r} was lost during {tool}: {await conn.why_gone()}") from None
        except TimeoutError:
            # while_alive cancelled the waiting request: the SDK has sent notifications/cancelled for it
            await self._check(ep, conn)  # before the caller hears of it: its next call must not find a wedged server
            raise Unavailable(
                f"MCP server {ep.name!r} did not answer {tool} within {timeout:g}s; the call was cancelled"
            ) from None
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                await self._drop(ep, conn)
                raise Unavailable(
                    f"MCP server {ep.name!r} closed the connection during {tool}: {await conn.why_gone()}"
                ) from exc
            raise Unavailable(f"MCP server {ep.name!r} failed on {tool}: {exc.error.message}") from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise
        except Exception as exc:  # the SDK's own checks (an output not matching the tool's outputSchema …)
            raise Unavailable(f"MCP server {ep.name!r} gave an unusable answer to {tool}: {reason_of(exc)}") from exc
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def _check(self, ep: Endpoint, conn: Connection) -> None:
        """After a timeout: a server that does not answer a ping is disconnected (and a stdio one stopped)."""
        try:
            # ping on the session (2026-07-28 removed ping: a server of that revision answers -32601, an answer all
            # the same)
            await asyncio.wait_for(conn.session.session.send_ping(), PING_AFTER_TIMEOUT_S)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                await self._drop(ep, conn)
        except Exception:  # noqa: BLE001 (no pong, whatever the reason)
            await self._drop(ep, conn)

    async def _drop(self, ep: Endpoint, conn: Connection) -> None:
        if self._connections.get(ep.server_id) is conn:
            self._connections.pop(ep.server_id, None)
        await conn.close()

    async def _forget(self, server_id: str) -> None:
        conn = self._connections.pop(server_id, None)
        if conn is not None:
            await conn.close()

    async def _close_all(self) -> None:
        for server_id in list(self._connections):
            await self._forget(server_id)

    # -- from anywhere (blocking the caller only) ------------------------------------------------------------------

    def list_tools(self, ep: Endpoint) -> list[dict[str, Any]]:
        return self._run(self._list(ep), self.connect_timeout + self.call_timeout * MAX_LIST_PAGES, ep)

    def call(
        self,
        ep: Endpoint,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        seconds = min(timeout or self.call_timeout, self.call_timeout)
        return self._run(self._call(ep, tool, arguments, seconds, meta or {}), self.connect_timeout + seconds + 10, ep)

    def forget(self, server_id: str) -> None:
        """Disconnect a server (deleted, or its configuration changed), without waiting: the caller may hold a
        transaction, and the next call of a changed server makes a new session anyway (keyed by revision)."""
        if self.loop.loop is not None:
            self.loop.submit(self._forget(server_id))

    def close(self) -> None:
        if self.loop.loop is not None:
            with contextlib.suppress(Exception):
                self.loop.run(self._close_all(), 15)
            self.loop.close()

    def _run(self, coro, limit: float, ep: Endpoint):
        try:
            return self.loop.run(coro, limit)
        except Unavailable:
            raise
        except TimeoutError as exc:  # the outer bound (the coroutine's own bounds come first)
            raise Unavailable(f"MCP server {ep.name!r}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001
            raise Unavailable(f"MCP server {ep.name!r}: {reason_of(exc)}") from exc
