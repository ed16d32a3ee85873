"""Pushes events to Socket.IO rooms. The runner and services call it after they commit."""
from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


def execution_room(execution_id: str) -> str:
    return f"execution:{execution_id}"


def workspace_room(workspace_id: str) -> str:
    return f"workspace:{workspace_id}"


class Notifier:
    """Socket.IO when a server is attached; silent otherwise (CLI commands, benchmarks in-process)."""

    def __init__(self, socketio: Any = None):
        self.socketio = socketio

    def emit(self, event: str, payload: dict[str, Any], room: str) -> None:
        if self.socketio is None:
            return
        try:
            self.socketio.emit(event, payload, to=room)
        except Exception:  # a lost push must never undo a committed change
            log.exception("could not push %s to %s", event, room)

    def execution_update(self, workspace_id: str, payload: dict[str, Any]) -> None:
        self.emit("execution_update", payload, execution_room(payload["execution_id"]))
        self.emit("execution_update", payload, workspace_room(workspace_id))
