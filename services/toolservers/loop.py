"""One asyncio event loop in a real OS thread, for the MCP SDK (asyncio-based) under any of Coach's async modes.

Under gevent or eventlet the stdlib is patched: `threading.Thread` would make a green thread, and a green
thread that runs an asyncio loop holds every connection. The loop runs in a native thread started with the
unpatched `_thread.start_new_thread`, and a caller waits for a coroutine's result without blocking the
hub: gevent wakes the waiting greenlet through a cross-thread `async_` watcher of its loop, eventlet waits in
its tpool. With plain threads the caller simply blocks on the future.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from services.offload import patched_by

T = TypeVar("T")


def native(module: str, name: str) -> Any:
    """The unpatched `module.name` (e.g. _thread.start_new_thread, subprocess.Popen) under gevent or eventlet."""
    library = patched_by()
    if library == "gevent":
        from gevent import monkey

        return monkey.get_original(module, name)
    if library == "eventlet":
        from eventlet import patcher

        return getattr(patcher.original(module), name)
    return getattr(__import__(module), name)


class LoopThread:
    """`run(coro, timeout)` from any thread or green thread; the coroutine runs on the loop's thread."""

    def __init__(self, name: str = "coach-mcp"):
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._lock = native("_thread", "allocate_lock")()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self.loop is not None:
                return self.loop
            started = native("_thread", "allocate_lock")()
            started.acquire()
            holder: dict[str, Any] = {}

            def main() -> None:
                loop = asyncio.new_event_loop()
                holder["loop"] = loop
                started.release()
                asyncio.set_event_loop(loop)
                loop.run_forever()

            native("_thread", "start_new_thread")(main, ())
            started.acquire()  # a native lock, held only while the thread creates its loop (microseconds)
            self.loop = holder["loop"]
            return self.loop

    def running(self) -> asyncio.AbstractEventLoop:
        """The loop (started if need be), for objects made outside it that it will use."""
        return self._ensure()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure())

    def run(self, coro: Awaitable[T], timeout: float | None = None) -> T:
        """The coroutine's result (or exception). On `timeout` the coroutine is cancelled and TimeoutError
        raised; callers usually bound the coroutine itself (asyncio.wait_for) and pass a margin here."""
        future = self.submit(coro)  # type: ignore[arg-type]
        if not wait(future, timeout):
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g}s")
        return future.result()

    def close(self) -> None:
        with self._lock:
            loop, self.loop = self.loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)


def wait(future: concurrent.futures.Future, timeout: float | None) -> bool:
    """Whether the future finished within `timeout`, waiting the way the async mode needs."""
    if future.done():
        return True
    library = patched_by()
    if library == "gevent":
        import gevent
        from gevent.event import Event

        hub = gevent.get_hub()
        finished = Event()
        watcher = hub.loop.async_()
        watcher.start(finished.set)
        try:
            # send() is the one call gevent allows from another thread: it wakes the hub, which runs set()
            future.add_done_callback(lambda _f: watcher.send())
            finished.wait(timeout)
        finally:
            watcher.stop()
            watcher.close()
        return future.done()
    if library == "eventlet":
        import eventlet

        # eventlet has no cross-thread wake-up for a green thread: look every few milliseconds (sleep yields)
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.001
        while not future.done():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            eventlet.sleep(pause)
            pause = min(pause * 2, 0.02)
        return True
    try:
        future.exception(timeout)
    except concurrent.futures.TimeoutError:
        return False
    except concurrent.futures.CancelledError:
        pass
    return True
