"""One session with an MCP server, on the MCP process's loop (asgi.py): its transport (streamable
HTTP through the workspace's outbound rules, or a stdio process), the SDK's `Client` on it (mode='auto': a
2026-07-28 server answers server/discover, an earlier one gets the initialize handshake), the tool-list changes
either era reports, waiting on a request only while the session lives, and why it ended.
services/toolservers/pool.py keeps one per server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.types import Implementation, ToolListChangedNotification

from services.tools.http import AsyncVettedTransport
from services.toolservers.stdio import stdio_transport

EXIT_WAIT_S = 2.0  # how long a stdio server whose pipes closed is given to exit, so its status can be told


class Unavailable(Exception):
    """The server could not be reached, died, or did not answer in time (message is shown to users)."""


@dataclass(frozen=True)
class Endpoint:
    server_id: str
    name: str
    revision: int
    transport: str  # http | stdio
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    command: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    # http: makes the outbound rules' check of each request as they are now (services.tools.http.Vetter)
    vetter: Callable[[], Any] | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.server_id, self.revision)


@dataclass
class Connection:
    endpoint: Endpoint
    on_list_changed: Callable[[Endpoint], None]
    connect_timeout: float
    session: Client | None = None
    error: str = ""
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    process: Any = None

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done() and self.session is not None

    @property
    def client(self) -> Client:
        """The session's client: a connection the pool hands out is open (alive), so it has one."""
        if self.session is None:
            raise Unavailable(f"MCP server {self.endpoint.name!r} is not connected: {self.error or 'not open'}")
        return self.session

    async def open(self) -> None:
        self.task = asyncio.create_task(self._run())
        try:
            await asyncio.wait_for(self.ready.wait(), self.connect_timeout)
        except TimeoutError:
            await self.close()
            raise Unavailable(
                f"MCP server {self.endpoint.name!r} did not complete the handshake within {self.connect_timeout:g}s"
            ) from None
        if self.session is None:
            gone = self.process.exit_status() if self.process is not None else ""
            raise Unavailable(
                f"MCP server {self.endpoint.name!r} could not be reached: {self.error}" + (f" ({gone})" if gone else "")
            )

    async def _on_message(self, message: Any) -> None:
        # a handshake-era (<= 2025-11-25) server tells of a changed list on the session itself
        if isinstance(message, ToolListChangedNotification):
            self.on_list_changed(self.endpoint)

    async def _listen(self, client: Client) -> None:
        """A 2026-07-28 server tells of a changed list on a subscriptions/listen stream only (no back channel)."""
        try:
            async with client.listen(tools_list_changed=True) as sub:
                async for _event in sub:
                    self.on_list_changed(self.endpoint)
        except ListenNotSupportedError:
            return  # a handshake-era connection: _on_message hears it
        except Exception:  # noqa: BLE001 (a server that serves no stream, or dropped it: the next refresh lists)
            return

    def _transport(self):
        ep = self.endpoint
        if ep.transport == "stdio":
            return self._stdio()
        # every request goes through the workspace's outbound rules, as http.request's do (no proxy from the
        # environment: it would resolve and connect on its own)
        transport = AsyncVettedTransport(ep.vetter) if ep.vetter is not None else None
        client = httpx2.AsyncClient(
            headers=dict(ep.headers),
            timeout=httpx2.Timeout(30.0, read=None),
            follow_redirects=False,
            transport=transport,
            trust_env=False,
        )
        return _http(ep.url, client)

    @contextlib.asynccontextmanager
    async def _stdio(self):
        ep = self.endpoint
        async with stdio_transport(list(ep.command), dict(ep.env), ep.cwd) as (read, write, process):
            self.process = process
            yield read, write

    async def _run(self) -> None:
        try:
            # mode='auto': a server/discover probe, and the initialize handshake with a server of the earlier
            # revisions; no response cache (a refresh must list what the server has now)
            async with Client(
                self._transport(),
                mode="auto",
                cache=None,
                message_handler=self._on_message,
                client_info=Implementation(name="coach", version="1"),
            ) as client:
                self.session = client
                self.ready.set()
                listener = asyncio.create_task(self._listen(client))
                try:
                    await self.stop.wait()
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except BaseException as exc:  # noqa: BLE001 (the reason is kept for the caller; the task just ends)
            self.error = reason_of(exc, self)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None
            self.ready.set()

    async def why_gone(self) -> str:
        """Why the session ended: a stdio server's exit status (its stdout closes a moment before it can be reaped,
        so the exit is waited for, briefly), or the transport's error (an outbound refusal, a dropped connection)."""
        if self.process is not None:
            await self.process.exited(EXIT_WAIT_S)
            return self.process.exit_status()
        return self.error or "the connection was closed"

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None and not self.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 5.0)
            except (TimeoutError, Exception):
                self.task.cancel()
                with contextlib.suppress(BaseException):
                    await self.task


@contextlib.asynccontextmanager
async def _http(url: str, client: httpx2.AsyncClient):
    async with client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            yield read, write


class SessionGone(Exception):
    """The connection's session ended (its transport failed or closed) while a request waited for its answer."""


async def while_alive(conn: Connection, request: Any, timeout: float) -> Any:
    """`request`'s result within `timeout` (asyncio.TimeoutError past it), or SessionGone as soon as the connection's
    session ends: the SDK answers the requests still pending only when its read stream closes, not when its
    transport fails (an outbound refusal of the next request, a dropped connection), so nothing else would stop
    the wait before the timeout."""
    task = asyncio.ensure_future(request)
    try:
        watched = {task} if conn.task is None else {task, conn.task}
        done, _ = await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        if conn.task is not None and conn.task.done():
            raise SessionGone()
        raise TimeoutError()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def reason_of(exc: BaseException, conn: Connection | None = None) -> str:
    """The innermost useful message of an exception (anyio wraps transport failures in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect: {exc}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename}"
    text = str(exc) or type(exc).__name__
    return text
