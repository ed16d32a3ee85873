"""Serve an ASGI app that runs on an asyncio loop thread (services/toolservers/loop.py) from inside a WSGI app, under
gevent, eventlet or plain threads: Coach's MCP endpoint (/mcp) is the official SDK's ASGI transport, Coach is WSGI.

The request's own (green) thread does the WSGI side: it reads the body, starts the answer when the ASGI app sends
`http.response.start`, and yields each body chunk as it comes (a streamed SSE answer with progress notifications
included). While it waits for the next message it also runs, for the ASGI app's handlers, the blocking work they hand
it (`Channel.call`: database reads and writes, calls of upstream MCP servers through Coach's client pool): that work
then runs where Coach's code always runs, never on the asyncio loop (whose thread has no greenlets of its own).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import http
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from services.toolservers.loop import LoopThread, native, wait

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


class Channel:
    """One request between its WSGI (green) thread and the ASGI app on the loop. The ASGI side puts what it has for
    the request (its messages, the calls it hands over, its end) on a queue; the WSGI side takes them without a
    round trip through the loop: it waits for the next one, when none is there yet, on a future that the loop
    side completes (loop.wait: the way the async mode needs)."""

    def __init__(self, body: bytes, loop: asyncio.AbstractEventLoop):
        self.body, self.loop = body, loop
        self.gone = asyncio.Event()  # bound to the loop at its first use, there
        self._body_sent = False
        self._items: collections.deque = collections.deque()
        self._lock = native("_thread", "allocate_lock")()  # held for a few instructions, from both threads
        self._waiter: concurrent.futures.Future | None = None

    # -- the ASGI side (on the loop) ---------------------------------------------------------------------------------

    async def receive(self) -> dict[str, Any]:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self._put(("asgi", message))

    async def end(self) -> None:
        self._put(("end", None))

    async def call(self, fn: Callable[[], Any]) -> Any:
        """fn() in the request's (green) thread; its result or exception here."""
        future = self.loop.create_future()
        self._put(("call", fn, future))
        return await future

    def _put(self, item: tuple) -> None:
        with self._lock:
            self._items.append(item)
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            waiter.set_result(None)

    # -- the WSGI side -------------------------------------------------------------------------------------------------

    def take(self) -> tuple:
        """The next item the ASGI side put, waiting for it if need be."""
        while True:
            with self._lock:
                if self._items:
                    return self._items.popleft()
                waiter = self._waiter = concurrent.futures.Future()
            wait(waiter, None)

    def resolve(self, future: asyncio.Future, value: Any, error: BaseException | None) -> None:
        def done() -> None:
            if future.cancelled():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        self.loop.call_soon_threadsafe(done)

    def disconnect(self) -> None:
        self.loop.call_soon_threadsafe(self.gone.set)


def scope_of(environ: dict[str, Any], **extra: Any) -> dict[str, Any]:
    headers = []
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").lower()
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = key.replace("_", "-").lower()
        else:
            continue
        if value:
            headers.append((name.encode("latin-1"), str(value).encode("latin-1")))
    path = environ.get("PATH_INFO") or "/"
    protocol = (environ.get("SERVER_PROTOCOL") or "HTTP/1.1").split("/")[-1]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": protocol,
        "method": environ.get("REQUEST_METHOD", "GET"),
        "scheme": environ.get("wsgi.url_scheme", "http"),
        "path": path,
        "raw_path": path.encode("latin-1"),
        "root_path": "",
        "query_string": (environ.get("QUERY_STRING") or "").encode("latin-1"),
        "headers": headers,
        "server": (environ.get("SERVER_NAME") or "", int(environ.get("SERVER_PORT") or 0)),
        "client": (environ.get("REMOTE_ADDR") or "", int(environ.get("REMOTE_PORT") or 0)),
        "state": {},
        **extra,
    }


def read_body(environ: dict[str, Any], limit: int) -> bytes | None:
    """The request's body, or None when it is larger than `limit`."""
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    length = environ.get("CONTENT_LENGTH")
    if length:
        try:
            size = int(length)
        except ValueError:
            return None
        if size > limit:
            return None
        return stream.read(size) if size > 0 else b""
    if (environ.get("HTTP_TRANSFER_ENCODING") or "").lower() == "chunked":
        data = stream.read(limit + 1)
        return None if len(data) > limit else data
    return b""


def status_line(code: int) -> str:
    try:
        return f"{code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return f"{code} Status"


def respond(
    loop: LoopThread, app: Callable[..., Awaitable[None]], scope: dict[str, Any], body: bytes, start_response
) -> Iterator[bytes]:
    """Run `app(scope, receive, send)` on the loop and answer its messages as WSGI, serving its `call`s meanwhile."""
    channel = Channel(body, loop.running())
    scope = {**scope, "coach.channel": channel}

    async def run() -> None:
        try:
            await app(scope, channel.receive, channel.send)
        except Exception:  # noqa: BLE001 (answered as a 500 below when nothing was sent yet)
            log.exception("the MCP endpoint failed")
        finally:
            await channel.end()

    loop.submit(run())
    while True:
        item = _next_message(channel)
        if item[0] == "end":
            start_response("500 Internal Server Error", [("Content-Type", "application/json")])
            return iter([b'{"error": {"code": "internal", "message": "the MCP endpoint failed"}}'])
        message = item[1]
        if message["type"] == "http.response.start":
            headers = [
                (k.decode("latin-1"), v.decode("latin-1"))
                for k, v in message.get("headers", [])
                if k.decode("latin-1").lower() not in HOP_BY_HOP
            ]
            start_response(status_line(message["status"]), headers)
            return _body(channel)


def _next_message(channel: Channel) -> tuple:
    """The channel's next ("asgi", message) or ("end", None); the calls the handlers hand over meanwhile are served
    here, in the request's thread."""
    while True:
        item = channel.take()
        if item[0] != "call":
            return item
        _kind, fn, future = item
        try:
            value, error = fn(), None
        except Exception as exc:  # noqa: BLE001 (raised in the handler that asked)
            value, error = None, exc
        channel.resolve(future, value, error)


def _body(channel: Channel) -> Iterator[bytes]:
    finished = False
    try:
        while True:
            item = _next_message(channel)
            if item[0] == "end":
                finished = True
                return
            message = item[1]
            if message["type"] != "http.response.body":
                continue
            chunk = message.get("body") or b""
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                finished = True
                return
    finally:
        if not finished:  # the client went away (or the server stops): the ASGI app hears http.disconnect
            channel.disconnect()
