"""One session with an MCP server, on the MCP loop thread (services/toolservers/loop.py): its transport (streamable
HTTP through the workspace's outbound rules, or a stdio process), the handshake, the JSON-RPC ids of calls (so a
timed-out call can be cancelled), waiting on a request only while the session lives, and why it ended.
services/toolservers/pool.py keeps one per server.
"""
from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp.types import Implementation, JSONRPCRequest, ServerNotification, ToolListChangedNotification

from services.tools.http import AsyncVettedTransport
from services.toolservers.stdio import stdio_transport

CALL_ID = "io.coach/call"
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


class _Recorder:
    """The write stream the ClientSession sends on, noting the JSON-RPC id of each tools/call by the call id
    Coach put in its _meta, so that a timed-out call can be cancelled by id (notifications/cancelled)."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.ids: dict[str, Any] = {}

    async def send(self, item: SessionMessage) -> None:
        root = getattr(item.message, "root", None)
        if isinstance(root, JSONRPCRequest) and root.method == "tools/call":
            meta = (root.params or {}).get("_meta") or {}
            if CALL_ID in meta:
                self.ids[meta[CALL_ID]] = root.id
        await self._stream.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self._stream.aclose()


@dataclass
class Connection:
    endpoint: Endpoint
    on_list_changed: Callable[[Endpoint], None]
    connect_timeout: float
    session: ClientSession | None = None
    recorder: _Recorder | None = None
    error: str = ""
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    process: Any = None

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done() and self.session is not None

    async def open(self) -> None:
        self.task = asyncio.create_task(self._run())
        try:
            await asyncio.wait_for(self.ready.wait(), self.connect_timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise Unavailable(f"MCP server {self.endpoint.name!r} did not complete the handshake within "
                              f"{self.connect_timeout:g}s")
        if self.session is None:
            gone = self.process.exit_status() if self.process is not None else ""
            raise Unavailable(f"MCP server {self.endpoint.name!r} could not be reached: {self.error}"
                              + (f" ({gone})" if gone else ""))

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ServerNotification) and isinstance(message.root, ToolListChangedNotification):
            self.on_list_changed(self.endpoint)

    def _transport(self):
        ep = self.endpoint
        if ep.transport == "stdio":
            return stdio_transport(list(ep.command), dict(ep.env), ep.cwd)
        # every request goes through the workspace's outbound rules, as http.request's do (no proxy from the
        # environment: it would resolve and connect on its own)
        transport = AsyncVettedTransport(ep.vetter) if ep.vetter is not None else None
        client = httpx.AsyncClient(headers=dict(ep.headers), timeout=httpx.Timeout(30.0, read=None),
                                   follow_redirects=False, transport=transport, trust_env=False)
        return _http(ep.url, client)

    async def _run(self) -> None:
        try:
            async with self._transport() as (read, write, extra):
                self.process = extra if self.endpoint.transport == "stdio" else None
                self.recorder = _Recorder(write)
                async with ClientSession(read, self.recorder, message_handler=self._on_message,
                                         client_info=Implementation(name="coach", version="1")) as session:
                    await session.initialize()
                    self.session = session
                    self.ready.set()
                    await self.stop.wait()
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
            except (asyncio.TimeoutError, Exception):
                self.task.cancel()
                with contextlib.suppress(BaseException):
                    await self.task


@contextlib.asynccontextmanager
async def _http(url: str, client: httpx.AsyncClient):
    async with client:
        async with streamable_http_client(url, http_client=client) as (read, write, _session_id):
            yield read, write, None


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
        raise asyncio.TimeoutError()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def reason_of(exc: BaseException, conn: Connection | None = None) -> str:
    """The innermost useful message of an exception (anyio wraps transport failures in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect: {exc}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename}"
    text = str(exc) or type(exc).__name__
    return text
