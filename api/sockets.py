"""Socket.IO events (DESIGN.md §5): rooms per execution and per workspace."""
from __future__ import annotations

from flask_socketio import SocketIO, join_room, leave_room

from api.context import services, workspace_id
from core.errors import CoachError
from services import executions
from services.notifier import execution_room, workspace_room


def _error(exc: Exception) -> dict:
    if isinstance(exc, CoachError):
        return {"ok": False, "error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    return {"ok": False, "error": {"code": "bad_request", "message": str(exc), "details": {}}}


def register(socketio: SocketIO) -> None:
    @socketio.on("join_execution")
    def join_execution(data):
        try:
            execution_id = str((data or {}).get("execution_id") or "")
            with services().db.transaction() as session:
                ex = executions.get(session, workspace_id(), execution_id)
                update = executions.update_event(ex)
            join_room(execution_room(execution_id))
            return {"ok": True, "execution": update}
        except Exception as exc:
            return _error(exc)

    @socketio.on("leave_execution")
    def leave_execution(data):
        leave_room(execution_room(str((data or {}).get("execution_id") or "")))
        return {"ok": True}

    @socketio.on("join_workspace")
    def join_workspace(data=None):
        join_room(workspace_room(workspace_id()))
        return {"ok": True, "workspace_id": workspace_id()}
