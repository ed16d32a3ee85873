"""Run CPU-bound work of the server's own (parsing a definition a user saved) off the event loop.

Under gevent or eventlet a green thread that computes for long holds every connection. Such work runs in a
real OS thread of the async library's pool (gevent's hub threadpool, eventlet's tpool), while the green thread
that asked waits without blocking the others; with plain threads it simply runs. Never call it inside a
database transaction: the green thread would yield while holding SQLite's write lock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def patched_by() -> str | None:
    """ "gevent" or "eventlet" when that library patched threading in this process, else None."""
    # only a library already imported can have patched anything (importing eventlet has effects of its own)
    if "gevent" in sys.modules:
        from gevent import monkey

        if monkey.is_module_patched("threading"):
            return "gevent"
    if "eventlet" in sys.modules:
        from eventlet import patcher

        if patcher.is_monkey_patched("thread"):
            return "eventlet"
    return None


def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args), in a real thread when an event loop would otherwise stand still; exceptions propagate."""
    library = patched_by()
    if library == "gevent":
        import gevent

        # the exception comes back as a value: raised inside the pool, gevent would also print its traceback to
        # stderr as an error of the hub's, for an ordinary refusal (an invalid definition's 422) too
        def caught() -> tuple[bool, Any]:
            try:
                return True, fn(*args)
            except Exception as exc:  # noqa: BLE001  (re-raised in the caller's green thread below)
                return False, exc

        ok, value = gevent.get_hub().threadpool.apply(caught)
        if not ok:
            raise value
        return value
    if library == "eventlet":
        from eventlet import tpool

        return tpool.execute(fn, *args)
    return fn(*args)
