"""Pushes events to Socket.IO rooms, only after the transaction that caused them has committed."""

from __future__ import annotations

import logging
import threading
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


def _rooms(execution: str | None, workspace: str | None) -> str | tuple[str, str] | None:
    """Where an event goes: the execution's room, the workspace's, or (execution room, workspace room) for an
    execution's event that concerns its workspace too (the notifier sends it to the execution's room and tells the
    workspace's room in a `queue_changed`)."""
    if execution and workspace:
        return execution_room(execution), workspace_room(workspace)
    return (execution and execution_room(execution)) or (workspace and workspace_room(workspace)) or None


class Events:
    """Events gathered during a transaction, sent by the notifier once it commits. An event for an execution and
    its workspace goes to the execution's room in full; the workspace's room hears of it in one small, coalesced
    `queue_changed` (Notifier.send)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, str | tuple[str, str]]] = []
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

# What the workspace's room hears of its executions' events (docs/api.md#real-time-socketio): one small event per
# workspace and interval, not each suggestion, update and decision (those go to the execution's room, to the pages
# that opened it). Sent every workspace tab, each event used to cost the server ~29 us of CPU per tab: decisions x
# tabs. A page that shows the queue or a count reads it again when told.
QUEUE_CHANGED = "queue_changed"
# the most executions one queue_changed names; more changed in its interval: `truncated` (a page reads everything)
QUEUE_CHANGED_MAX = 100
# A workflow's metrics snapshot is a state: the workspace's room gets its newest one per interval, with queue_changed
# (the dashboards and panels show it as it is, so folding it into the small event would make every tab read it).
COALESCED = "metrics_update"


def _id(room: str) -> str:
    return room.partition(":")[2]


class _Changes:
    """What a workspace's room has yet to hear: which executions changed (with the newest status an
    `execution_update` gave), the kinds of their events, and each workflow's newest metrics snapshot."""

    __slots__ = ("executions", "kinds", "metrics", "truncated")

    def __init__(self) -> None:
        self.executions: dict[str, str | None] = {}
        self.kinds: dict[str, None] = {}  # an ordered set
        self.metrics: dict[str, Any] = {}  # workflow id -> its newest metrics_update
        self.truncated = False

    def execution(self, execution_id: str, event: str, payload: Any) -> None:
        self.kinds[event] = None
        pushed = event == "execution_update" and type(payload) is dict
        self._note(execution_id, payload.get("status") if pushed else None)

    def _note(self, execution_id: str, status: str | None) -> None:
        if execution_id in self.executions:
            if status is not None:  # the newest status pushed counts; an event without one leaves it
                self.executions[execution_id] = status
        elif len(self.executions) < QUEUE_CHANGED_MAX:
            self.executions[execution_id] = status
        else:
            self.truncated = True

    def merge(self, later: _Changes) -> None:
        for execution_id, status in later.executions.items():
            self._note(execution_id, status)
        self.kinds.update(later.kinds)
        self.metrics.update(later.metrics)
        self.truncated = self.truncated or later.truncated

    def event(self, workspace_id: str) -> dict[str, Any]:
        return {
            "workspace_id": workspace_id,
            "executions": [{"execution_id": e, "status": s} for e, s in self.executions.items()],
            "truncated": self.truncated,
            "events": list(self.kinds),
            "at": datetime.now(UTC).isoformat(),
        }


class _Coalescer:
    """One `queue_changed` (and each workflow's newest `metrics_update`) per workspace and interval: the first change
    of a quiet workspace is sent at once (the leading edge) and opens an interval; what changes within it is sent once
    at its end, which opens the next, until one passes with nothing to send. No timer runs while a workspace is idle,
    and the last change is never held back longer than an interval. The timer is a Socket.IO background task
    (start_background_task / sleep), so it is a thread, a greenlet or a green thread as the server's async mode
    wants."""

    def __init__(self, socketio: Any, interval_s: float, send: Callable[[str, _Changes], None]):
        self.socketio, self.interval_s, self._send = socketio, interval_s, send
        self._lock = threading.Lock()
        # a workspace in its interval -> what came within it so far (None: nothing yet)
        self._open: dict[str, _Changes | None] = {}

    def add(self, workspace_id: str, changes: _Changes) -> None:
        with self._lock:
            if workspace_id in self._open:
                held = self._open[workspace_id]
                if held is None:
                    self._open[workspace_id] = changes
                else:
                    held.merge(changes)
                return
            self._open[workspace_id] = None
        self._send(workspace_id, changes)  # the leading edge, before the timer starts: never overtaken by it
        try:
            self.socketio.start_background_task(self._close, workspace_id)
        except Exception:  # no timer: what comes meanwhile is sent with the next change instead of being held
            log.exception("could not start the queue_changed timer of workspace %s", workspace_id)
            self._flush(workspace_id)

    def _flush(self, workspace_id: str) -> None:
        with self._lock:
            held = self._open.pop(workspace_id, None)
        if held is not None:
            self._send(workspace_id, held)

    def _close(self, workspace_id: str) -> None:
        try:
            while True:
                self.socketio.sleep(self.interval_s)
                with self._lock:
                    held = self._open.get(workspace_id)
                    if held is None:
                        del self._open[workspace_id]
                        return
                    self._open[workspace_id] = None  # the next interval starts with this send
                self._send(workspace_id, held)
        except BaseException:  # killed (a server stopping) or failed: the workspace must not stay held
            self._flush(workspace_id)
            raise


class Notifier:
    """Socket.IO when a server is attached; silent otherwise (CLI commands, in-process benchmarks). `coalesce_s`
    (COACH_QUEUE_CHANGED_S): the interval of a workspace's `queue_changed` and `metrics_update`; 0 sends them after
    every transaction (a Celery worker's notifier, which pushes through the message queue from a process without a
    Socket.IO server of its own to run a timer)."""

    def __init__(self, socketio: Any = None, *, coalesce_s: float = 0.0):
        self.socketio = socketio
        self.listeners: list[Callable[[str, Any], None]] = []  # in this process: listen()
        self._coalescer = _Coalescer(socketio, coalesce_s, self._changed) if socketio and coalesce_s > 0 else None

    def listen(self, listener: Callable[[str, Any], None]) -> None:
        """listener(event, payload) for every event this process sends after its commit (the MCP gateway wakes a
        call held for a review when the review is decided here; a decision made by another server reaches it at
        its next look instead)."""
        self.listeners.append(listener)

    def emit(self, event: str, payload: dict[str, Any], room: str) -> None:
        if self.socketio is None:
            return
        try:
            self.socketio.emit(event, payload, to=room)
        except Exception:  # a lost push must never undo a committed change
            log.exception("could not push %s to %s", event, room)

    def _changed(self, workspace_id: str, changes: _Changes) -> None:
        room = workspace_room(workspace_id)
        if changes.kinds:
            self.emit(QUEUE_CHANGED, changes.event(workspace_id), room)
        for snapshot in changes.metrics.values():
            self.emit(COALESCED, snapshot, room)

    def send(self, batch: Events) -> None:
        """The transaction's events in the order added, except the workspace's summaries (SUMMARIES), which go
        last: the operator waits for the next suggestion, a dashboard for the new snapshot only to redraw it. An
        execution's event goes to its room; its workspace's room hears `queue_changed` instead, and a workflow's
        `metrics_update` coalesced with it (_Coalescer); the workspace's own events (approvals, levels, regions,
        packs, gateway tools: rare, and what their pages show) go to its room as they are."""
        batch.made()  # its transaction committed them already; one that did not run its hooks makes them here
        changed: dict[str, _Changes] = {}
        live = self.socketio is not None  # (silent: nothing to gather for a workspace's room)
        for summaries in (False, True):
            for event, payload, room in batch.items:
                if (event in SUMMARIES) is not summaries:
                    continue
                if isinstance(room, tuple):  # (the execution's room, its workspace's)
                    self.emit(event, payload, room[0])
                    if live:
                        workspace_id = _id(room[1])
                        if workspace_id not in changed:
                            changed[workspace_id] = _Changes()
                        changed[workspace_id].execution(_id(room[0]), event, payload)
                elif event == COALESCED and type(payload) is dict and room.startswith("workspace:"):
                    if live:
                        changed.setdefault(_id(room), _Changes()).metrics[str(payload.get("workflow_id"))] = payload
                else:
                    self.emit(event, payload, room)
        for workspace_id, changes in changed.items():
            if self._coalescer is not None:
                self._coalescer.add(workspace_id, changes)
            else:
                self._changed(workspace_id, changes)
        for listener in self.listeners:
            for event, payload, _room in batch.items:
                try:
                    listener(event, payload)
                except Exception:  # a listener's failure must never undo a committed change either
                    log.exception("a listener of %s failed", event)
