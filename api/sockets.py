"""Socket.IO events (DESIGN.md §5): rooms per execution and per workspace, decisions with an ack."""
from __future__ import annotations

from flask import request
from flask_socketio import SocketIO, emit, join_room, leave_room

from marshmallow import ValidationError as MarshmallowError

from api.coaching import DecisionArgs
from api.context import operator, services, workspace_id
from core.errors import CoachError, ValidationFailed
from services import coaching, decisions, executions
from services.notifier import execution_room, jsonable, workspace_room


def _error(exc: Exception) -> dict:
    if isinstance(exc, CoachError):
        return {"ok": False, "error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    return {"ok": False, "error": {"code": "bad_request", "message": "invalid request", "details": {}}}


def _execution_id(data) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("execution_id"), str):
        raise ValidationFailed("execution_id is required", details={"execution_id": ["is required"]})
    return data["execution_id"]


def register(socketio: SocketIO) -> None:
    @socketio.on("join_execution")
    def join_execution(data=None):
        try:
            execution_id = _execution_id(data)
            svc = services()
            with svc.db.transaction() as session:
                ex = executions.get(session, workspace_id(), execution_id)
                update = executions.update_event(ex)
                defn = svc.definitions.get(session, ex.workflow_id, ex.workflow_version)
                waiting = [coaching.view(s, svc.tools, defn.step(s.step_id))
                           for s in coaching.pending(session, ex.id)]
                stats = coaching.stats(session, ex) if ex.mode != "normal" else None
            join_room(execution_room(execution_id))
            # a reload or a reconnect never loses the pending suggestion: send it to this client at once
            for suggestion in waiting:
                emit("coaching_suggestion", jsonable(suggestion), to=request.sid)
            if stats is not None:
                emit("coaching_stats", {"execution_id": execution_id, **stats}, to=request.sid)
            return {"ok": True, "execution": jsonable(update), "pending": len(waiting)}
        except Exception as exc:
            return _error(exc)

    @socketio.on("leave_execution")
    def leave_execution(data=None):
        try:
            leave_room(execution_room(_execution_id(data)))
            return {"ok": True}
        except Exception as exc:
            return _error(exc)

    @socketio.on("join_workspace")
    def join_workspace(data=None):
        join_room(workspace_room(workspace_id()))
        return {"ok": True, "workspace_id": workspace_id()}

    @socketio.on("coaching_decision")
    def coaching_decision(data=None):
        try:
            execution_id = _execution_id(data)
            fields = ("suggestion_id", "decision", "correction", "feedback", "manual_output")
            try:  # the REST schema, so that both channels accept exactly the same bodies
                body = DecisionArgs().load({k: data[k] for k in fields if k in data})
            except MarshmallowError as exc:
                raise ValidationFailed("request is invalid", details=exc.messages_dict) from None
            response = decisions.submit(services(), workspace_id(), execution_id, body, operator(),
                                        data.get("idempotency_key"))
            return response
        except Exception as exc:
            return _error(exc)
