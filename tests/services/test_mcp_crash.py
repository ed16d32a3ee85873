"""A stdio MCP server that crashes in the middle of a call: the call fails with the server's exit status, every
time, also when something else in the process reaps children (a SIGCHLD handler, which this test stands in for with
a thread reaping any child). A real server (tests/support/mcp_servers.py) and the real pool on an asyncio loop of
its own, as in the MCP process (asgi.py); nothing is mocked."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time

import pytest
from mcp.client.stdio import get_default_environment

from services.toolservers.connection import Endpoint, Unavailable
from services.toolservers.pool import Clients
from tests.support.mcp_servers import stdio_command

CRASHES = 6


@pytest.fixture
def clients():
    return Clients(call_timeout=10.0, connect_timeout=20.0)


@pytest.fixture
def reaper():
    """Reaps any child of this process as soon as it exits, as gevent's SIGCHLD handler does."""
    stop = threading.Event()

    def reap() -> None:
        while not stop.is_set():
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.001)

    thread = threading.Thread(target=reap, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(2)


def on_a_loop_of_its_own(coro):
    """asyncio.run(coro) in a thread of its own, as the MCP process runs the pool on uvicorn's loop: this worker's
    own thread may already hold an event loop (Playwright's sync API keeps one running for the browser tests that
    ran before in the same process)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def endpoint(tmp_path) -> Endpoint:
    return Endpoint(
        "srv",
        "shop",
        1,
        "stdio",
        command=tuple(stdio_command("shop")),
        env=tuple(sorted(get_default_environment().items())),
        cwd=str(tmp_path),
    )


@pytest.mark.parametrize("reaped", [False, True], ids=["own-wait", "reaped-elsewhere"])
def test_a_crash_mid_call_reports_the_exit_status_every_time(clients, tmp_path, request, reaped):
    if reaped:
        request.getfixturevalue("reaper")
    ep = endpoint(tmp_path)

    async def crashes() -> list[str]:
        clients.start()
        errors = []
        try:
            for _ in range(CRASHES):
                with pytest.raises(Unavailable) as caught:
                    await clients.acall(ep, "crash", {})
                errors.append(str(caught.value))
                # the next call starts the server again and works
                result = await clients.acall(ep, "add", {"a": 1, "b": 2})
                assert result["content"][0]["text"] == "3"
        finally:
            await clients.aclose()
        return errors

    errors = on_a_loop_of_its_own(crashes())
    assert all("exited with status 3" in e for e in errors), errors
    assert all("did not answer" not in e for e in errors), errors


def test_a_worker_thread_calls_through_the_loop_and_the_loop_itself_may_not_block(clients, tmp_path):
    """The gateway's handlers call the pool from worker threads (anyio.to_thread): the call runs on the loop and its
    answer comes back to the thread; the loop's own thread is refused (it would wait on itself)."""
    import anyio

    ep = endpoint(tmp_path)

    async def both() -> tuple[dict, str]:
        clients.start()
        try:
            result = await anyio.to_thread.run_sync(lambda: clients.call(ep, "add", {"a": 2, "b": 3}))
            try:
                clients.call(ep, "add", {"a": 1, "b": 1})
                refused = ""
            except RuntimeError as exc:
                refused = str(exc)
        finally:
            await clients.aclose()
        return result, refused

    result, refused = on_a_loop_of_its_own(both())
    assert result["content"][0]["text"] == "5"
    assert "await acall" in refused
