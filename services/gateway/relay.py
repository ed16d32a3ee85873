"""The MCP process's notifier: the events its gateway raises (approval_pending, held call updates, a confirm's answer …)
are pushed by the web process, which has the Socket.IO server; here they are sent to it.

Why an internal route of the web process (POST /internal/events, COACH_MCP_TOKEN as bearer) rather than Flask-SocketIO's
message queue: it is one path that works with and without Redis. Without a message queue there is nothing else between
the two processes; with one, the web process's emit goes through the queue as every emit does, so each server of a
cluster still pushes to its own clients. The events are sent after their transaction committed (as everywhere,
services/notifier.py), as the transaction gathered them, in order, by one task on the MCP process's loop, in batches; a
web process that does not answer loses the push, never the change (the database has it: a page that reloads shows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from config import Settings
from services.notifier import Events, Notifier

log = logging.getLogger(__name__)

BATCH = 200
TRIES = 3


class Relay(Notifier):
    def __init__(self, settings: Settings):
        super().__init__(None)
        self.url = settings.resolved_web_url + "/internal/events"
        self.token = settings.mcp_token
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queue: asyncio.Queue[list[Any]] | None = None

    def send(self, batch: Events) -> None:
        """From any thread (the gateway's worker threads, after their commit): the transaction's events, as they
        are, queued for the sender task (the web process sends them as its own: Notifier.send, with its rooms'
        coalescing); this process's listeners (the gateway's held calls) hear them here."""
        batch.made()
        loop, queue = self.loop, self.queue
        if loop is not None and queue is not None and not loop.is_closed():
            for event, payload, room in batch.items:
                item = [event, payload, room if isinstance(room, str) else list(room)]
                loop.call_soon_threadsafe(queue.put_nowait, item)
        for listener in self.listeners:
            for event, payload, _room in batch.items:
                try:
                    listener(event, payload)
                except Exception:  # a listener's failure must never undo a committed change either
                    log.exception("a listener of %s failed", event)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[Relay]:
        """The sender task, for as long as the MCP process serves; what is queued when it stops is sent first
        (briefly)."""
        self.loop, self.queue = asyncio.get_running_loop(), asyncio.Queue()
        async with httpx.AsyncClient(
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            timeout=httpx.Timeout(10.0, connect=2.0),
            trust_env=False,
        ) as http:
            task = asyncio.create_task(self._send_all(http))
            try:
                yield self
            finally:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.queue.join(), 2.0)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                self.loop = None

    async def _send_all(self, http: httpx.AsyncClient) -> None:
        queue = self.queue
        assert queue is not None
        while True:
            batch = [await queue.get()]
            while len(batch) < BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            try:
                await self._send(http, batch)
            finally:
                for _ in batch:
                    queue.task_done()

    async def _send(self, http: httpx.AsyncClient, batch: list[list[Any]]) -> None:
        body = orjson.dumps({"events": batch}, option=orjson.OPT_NAIVE_UTC | orjson.OPT_NON_STR_KEYS)
        for attempt in range(TRIES):
            try:
                answer = await http.post(self.url, content=body)
                if answer.status_code == 200:
                    return
                log.warning("the web process refused %d events: HTTP %d", len(batch), answer.status_code)
                return
            except httpx.HTTPError as exc:
                if attempt == TRIES - 1:
                    log.warning("could not send %d events to the web process: %s", len(batch), type(exc).__name__)
                    return
                await asyncio.sleep(0.2 * (attempt + 1))
