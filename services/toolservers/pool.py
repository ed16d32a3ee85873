"""Sessions with MCP servers, pooled per server and reconnected, in Coach's MCP process (asgi.py) on its event loop.

The pool lives on uvicorn's loop: the internal routes the web process and the workers call
(services/toolservers/remote.py) await `alist_tools` / `acall` there, and the gateway's handlers, whose database work
runs in worker threads (anyio.to_thread), call the blocking `list_tools` / `call` from those threads, which hand the
coroutine to the loop and wait for it. One session per server configuration (an edit makes a new one); a session
whose transport died (the server crashed, the connection dropped) is replaced at the next use. A call that outlives
its timeout is cancelled: the caller gets a clear error at once, the server gets notifications/cancelled (the SDK
sends it when the waiting request is cancelled), and a server that then does not answer a ping is disconnected (a
stdio server that blocks its own loop is stopped), so nothing waits on it again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
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

log = logging.getLogger(__name__)

PING_AFTER_TIMEOUT_S = 2.0
MAX_LIST_PAGES = 20


class Clients:
    """The pool of sessions on the MCP process's loop (`start()` there), its coroutines, and the blocking calls the
    gateway's worker threads make."""

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
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop the sessions live on (start())
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
                page = await while_alive(conn, conn.client.list_tools(cursor=cursor), self.call_timeout)
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
        request = conn.client.call_tool(
            tool,
            arguments,
            read_timeout_seconds=timeout + 5,
            # a request's _meta takes any key (the SDK casts it so itself, mcp.shared.peer); its TypedDict names only
            # progressToken
            meta=meta or None,  # type: ignore[arg-type]
        )
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
            await asyncio.wait_for(conn.client.session.send_ping(), PING_AFTER_TIMEOUT_S)
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

    # -- on the loop, for the internal routes ----------------------------------------------------------------------

    def start(self) -> None:
        """On the loop the sessions will live on (the MCP process's, at its start-up)."""
        self.loop = asyncio.get_running_loop()

    async def alist_tools(self, ep: Endpoint) -> list[dict[str, Any]]:
        return await self._bounded(self._list(ep), self.connect_timeout + self.call_timeout * MAX_LIST_PAGES, ep)

    async def acall(
        self,
        ep: Endpoint,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        seconds = min(timeout or self.call_timeout, self.call_timeout)
        return await self._bounded(
            self._call(ep, tool, arguments, seconds, meta or {}), self.connect_timeout + seconds + 10, ep
        )

    async def aforget(self, server_id: str) -> None:
        await self._forget(server_id)

    async def aclose(self) -> None:
        await self._close_all()

    async def _bounded(self, coro, limit: float, ep: Endpoint):
        try:
            return await asyncio.wait_for(coro, limit)
        except Unavailable:
            raise
        except TimeoutError as exc:  # the outer bound (the coroutine's own bounds come first)
            raise Unavailable(f"MCP server {ep.name!r}: no answer within {limit:g}s") from exc
        except Exception as exc:  # noqa: BLE001
            raise Unavailable(f"MCP server {ep.name!r}: {reason_of(exc)}") from exc

    # -- from a worker thread of the MCP process (blocking the caller only) ----------------------------------------

    def list_tools(self, ep: Endpoint) -> list[dict[str, Any]]:
        return self._run(self.alist_tools(ep), ep)

    def call(
        self,
        ep: Endpoint,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self._run(self.acall(ep, tool, arguments, timeout=timeout, meta=meta), ep)

    def forget(self, server_id: str) -> None:
        """Disconnect a server (deleted, or its configuration changed), without waiting: the caller may hold a
        transaction, and the next call of a changed server makes a new session anyway (keyed by revision)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(self._forget(server_id))
        else:
            asyncio.run_coroutine_threadsafe(self._forget(server_id), loop)

    def close(self) -> None:
        """Nothing to do here: the MCP process closes its sessions on its loop (aclose) when it stops."""

    def _run(self, coro, ep: Endpoint):
        loop = self.loop
        if loop is None or loop.is_closed():
            coro.close()
            raise Unavailable(f"MCP server {ep.name!r}: the MCP client pool is not running in this process")
        if threading.get_ident() == getattr(loop, "_thread_id", None):
            coro.close()
            raise RuntimeError("Clients.call/list_tools block: from the loop, await acall/alist_tools instead")
        future: concurrent.futures.Future = asyncio.run_coroutine_threadsafe(coro, loop)
        return future.result()  # bounded by the coroutine itself (_bounded)
