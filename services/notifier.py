"""Pushes events to Socket.IO rooms, only after the transaction that caused them has committed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import orjson
from sqlalchemy import event as sa_event

log = logging.getLogger(__name__)


def execution_room(execution_id: str) -> str:
    return f"execution:{execution_id}"


def workspace_room(workspace_id: str) -> str:
    return f"workspace:{workspace_id}"


_PLAIN = frozenset((str, int, float, bool, type(None)))


_AS_JSON = orjson.OPT_NAIVE_UTC | orjson.OPT_NON_STR_KEYS


def jsonable(value: Any) -> Any:
    """Plain JSON values, a copy: datetimes become ISO 8601 in UTC (a naive one is taken as UTC), keys strings, NaN
    and infinities null (JSON has none)."""
    kind = type(value)
    if kind in _PLAIN:  # most values: checked first, by exact type (every event payload passes through here)
        return value
    if kind is dict or kind is list:
        # through JSON text and back (orjson, in C): half the cost of the copy value by value below, which does
        # what orjson declines (an integer beyond 64 bits, a lone surrogate, a type JSON does not know)
        try:
            return orjson.loads(orjson.dumps(value, option=_AS_JSON))
        except TypeError:
            pass
    return jsonable_exact(value)


def jsonable_exact(value: Any) -> Any:
    """jsonable, value by value, floats kept as they are (NaN and infinities too): for a caller that spells those
    itself (the audit chain's plain values)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {
            k if type(k) is str else str(k): v if type(v) in _PLAIN else jsonable_exact(v) for k, v in value.items()
        }
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable_exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable_exact(v) for v in value]
    return value


def _rooms(execution: str | None, workspace: str | None) -> str | tuple[str, ...] | None:
    """Where an event goes: the execution's room, the workspace's, or both (one emit to their union)."""
    rooms = tuple(
        room for room in (execution and execution_room(execution), workspace and workspace_room(workspace)) if room
    )
    return rooms[0] if len(rooms) == 1 else rooms or None


class Events:
    """Events gathered during a transaction, sent by the notifier once it commits. An event for an execution and
    its workspace is one item for both rooms: Socket.IO sends it once to the union, so a client in both rooms (the
    coaching panel) receives it once, not twice."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, str | tuple[str, ...]]] = []
        self._before_commit = lambda _session: self.made()  # one listener object, so a session gets it once

    def add(
        self,
        event: str,
        payload: Any,
        *,
        execution: str | None = None,
        workspace: str | None = None,
        plain: bool = False,
    ) -> None:
        """`plain`: the payload is made of JSON values only and is the caller's to give away (made for this event:
        a metrics snapshot, executions.update_event, the session's stats): it is neither converted nor copied."""
        to = _rooms(execution, workspace)
        if to:
            self.items.append((event, payload if plain else jsonable(payload), to))

    def at_commit(
        self,
        session,
        event: str,
        key: str,
        build: Callable[[], dict],
        *,
        execution: str | None = None,
        workspace: str | None = None,
    ) -> None:
        """An event whose payload is a state (an execution's `execution_update`), made once, at the end of the
        transaction (`build`, run just before its commit, returns a payload of JSON values only) from the state as
        it then is, however often it changed in between. It goes where the last of the transaction's calls for the
        same `key` put it: after what was added before that call (a decision's next suggestion comes first).
        `session`: the Session whose commit makes it (its `before_commit` event)."""
        to = _rooms(execution, workspace)
        if not to:
            return
        self.items = [
            item for item in self.items if not (item[0] == event and type(item[1]) is _AtCommit and item[1].key == key)
        ]
        self.items.append((event, _AtCommit(key, build), to))
        if not sa_event.contains(session, "before_commit", self._before_commit):
            sa_event.listen(session, "before_commit", self._before_commit)

    def made(self) -> Events:
        """Every at_commit payload made (its transaction's commit does it)."""
        if any(type(item[1]) is _AtCommit for item in self.items):
            items, self.items = self.items, []
            for event, payload, to in items:
                self.items.append((event, payload.build() if type(payload) is _AtCommit else payload, to))
        return self

    def latest(self, event: str, payload: Any, *, execution: str, plain: bool = False) -> None:
        """A state rather than a happening (e.g. the session stats): only its last value in this transaction
        is sent, after everything added before it."""
        room = execution_room(execution)
        self.items = [item for item in self.items if not (item[0] == event and item[2] == room)]
        self.add(event, payload, execution=execution, plain=plain)

    def __bool__(self) -> bool:
        return bool(self.items)


class _AtCommit:
    """An at_commit event's payload, until its transaction's commit makes it."""

    __slots__ = ("key", "build")

    def __init__(self, key: str, build: Callable[[], dict]):
        self.key, self.build = key, build


# A workflow's metrics snapshot and level, for its workspace's dashboards: a decision adds them before its next
# suggestion is made, and sending them first held the suggestion back (a few ms, for every panel in the workspace
# room, and the panel's work on them before it came to the suggestion).
SUMMARIES = frozenset(("metrics_update", "workflow_level_changed"))


class Notifier:
    """Socket.IO when a server is attached; silent otherwise (CLI commands, in-process benchmarks)."""

    def __init__(self, socketio: Any = None):
        self.socketio = socketio
        self.listeners: list[Callable[[str, Any], None]] = []  # in this process: listen()

    def listen(self, listener: Callable[[str, Any], None]) -> None:
        """listener(event, payload) for every event this process sends after its commit (the MCP gateway wakes a
        call held for a review when the review is decided here; a decision made by another server reaches it at
        its next look instead)."""
        self.listeners.append(listener)

    def emit(self, event: str, payload: dict[str, Any], room: str | tuple[str, ...]) -> None:
        if self.socketio is None:
            return
        try:
            # several rooms: one emit to their union (python-socketio sends it once per client)
            self.socketio.emit(event, payload, to=room if isinstance(room, str) else list(room))
        except Exception:  # a lost push must never undo a committed change
            log.exception("could not push %s to %s", event, room)

    def send(self, events: Events) -> None:
        """The transaction's events in the order added, except the workspace's summaries (SUMMARIES), which go
        last: the operator waits for the next suggestion, a dashboard for the new snapshot only to redraw it."""
        events.made()  # its transaction committed them already; one that did not run its hooks makes them here
        for event, payload, room in events.items:
            if event not in SUMMARIES:
                self.emit(event, payload, room)
        for event, payload, room in events.items:
            if event in SUMMARIES:
                self.emit(event, payload, room)
        for listener in self.listeners:
            for event, payload, _room in events.items:
                try:
                    listener(event, payload)
                except Exception:  # a listener's failure must never undo a committed change either
                    log.exception("a listener of %s failed", event)
