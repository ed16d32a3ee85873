"""Socket.IO events (docs/api.md#real-time-socketio): rooms per execution and per workspace, decisions with an ack."""

from __future__ import annotations

import logging
import threading

from flask import current_app, request, session
from flask_socketio import SocketIO, emit, join_room, leave_room
from marshmallow import ValidationError as MarshmallowError

from api import control as control_api
from api.base import unstorable_at
from api.coaching import DecisionArgs, UndoArgs
from api.context import operator, require, role, services, workspace_id
from core.errors import BadRequest, CoachError, Forbidden, NotFound, ValidationFailed
from services.coaching import service as coaching
from services.db import retrying
from services.decisions import coaching as decisions
from services.decisions import undo
from services.executions import service as executions
from services.models.users import User
from services.notifier import execution_room, jsonable, workspace_room
from services.users import service as users
from services.users import tokens

_DECISION_ARGS = DecisionArgs()  # made once: a schema holds no per-load state
_UNDO_ARGS = UndoArgs()
# interactive control over the socket: event -> (the REST body's schema, the function REST calls)
_CONTROL = {
    "pause_execution": (control_api.PauseArgs(), control_api.pause),
    "apply_correction": (control_api.CorrectionArgs(), control_api.apply_correction),
    "resume_execution": (control_api.ResumeArgs(), control_api.resume),
}
log = logging.getLogger(__name__)

# The connections of this process: sid -> who it was accepted as. `kick` disconnects the ones whose credentials
# an HTTP request just ended (logout, token revoked, member removed, disabled or their tokens revoked).
_CONNECTIONS: dict[str, dict] = {}
_CONNECTIONS_LOCK = threading.Lock()


def _sid() -> str:
    """The Socket.IO session id of the event being handled: Flask-SocketIO sets it on the request (an attribute that
    Flask's Request does not declare)."""
    sid = getattr(request, "sid", None)
    if not isinstance(sid, str):
        raise RuntimeError("not in a Socket.IO event")
    return sid


def kick(
    user_id: str,
    *,
    workspace_id: str | None = None,
    token_hash: str | None = None,
    cookie_only: bool = False,
    tokens_only: bool = False,
    reason: str | None = None,
) -> int:
    """Disconnect at once this process's sockets of `user_id` that match (all of them when nothing else is
    given): in `workspace_id`, authenticated by the token `token_hash`, by a session cookie, or by any token. Call it
    after the transaction that ended the credentials has committed. With a `reason` (`disabled`, `removed`), each socket
    is
    first sent `access_ended {reason, workspace_id}`, so that an open page says why at once instead of
    reconnecting. Returns how many were disconnected."""
    with _CONNECTIONS_LOCK:
        sids = [
            sid
            for sid, who in _CONNECTIONS.items()
            if who["user_id"] == user_id
            and (workspace_id is None or who["workspace_id"] == workspace_id)
            and (token_hash is None or who["token_hash"] == token_hash)
            and (not cookie_only or who["token_hash"] is None)
            and (not tokens_only or who["token_hash"] is not None)
        ]
    socketio = current_app.extensions.get("socketio")
    for sid in sids:
        try:
            if socketio is None:  # (an app without Socket.IO: nothing to disconnect)
                raise LookupError("no Socket.IO server")
            if reason is not None:
                with _CONNECTIONS_LOCK:
                    where = (_CONNECTIONS.get(sid) or {}).get("workspace_id")
                socketio.server.emit("access_ended", {"reason": reason, "workspace_id": where}, to=sid, namespace="/")
            socketio.server.disconnect(sid, namespace="/")
        except Exception:  # one that went away meanwhile
            log.debug("could not disconnect %s", sid, exc_info=True)
        with _CONNECTIONS_LOCK:
            _CONNECTIONS.pop(sid, None)
    return len(sids)


def _error(exc: Exception) -> dict:
    if isinstance(exc, CoachError):
        return {"ok": False, "error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    # as an HTTP request's unexpected error (api/errors.py): the server's fault, logged, never a stack trace or SQL
    log.exception("a socket event failed")
    return {"ok": False, "error": {"code": "internal_error", "message": "internal server error", "details": {}}}


def _execution_id(data) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("execution_id"), str):
        raise ValidationFailed("execution_id is required", details={"execution_id": ["is required"]})
    return data["execution_id"]


def _accept(auth) -> bool:
    """Who this connection is: a bearer token in `auth`, or the session cookie of the web app."""
    auth = auth if isinstance(auth, dict) else {}
    with services().db.read() as db:
        token = auth.get("token")
        made_at = None
        if isinstance(token, str) and token:
            found = tokens.token_and_user(db, token)
            user, made_at = (found[1], found[0].created_at) if found else (None, None)
        else:
            user = db.get(User, session.get("user_id") or "")
            # a logged-out (or copied then logged-out) cookie is refused, as on HTTP
            if user is not None and session.get("sv", 0) != (user.session_version or 0):
                return False
        if user is None or user.disabled:
            return False
        try:  # the same rule as HTTP requests: an asked-for workspace must be the user's
            picked = users.pick_workspace(db, user, auth.get("workspace"), session.get("workspace_id"), made_at)
        except (NotFound, Forbidden):
            return False
        if picked is None:
            return False
        ws, role = picked
        hashed = users.token_hash(token) if isinstance(token, str) and token else None
        session.update(
            sock_user_id=user.id,
            sock_email=user.email,
            sock_workspace_id=ws.id,
            sock_role=role,
            sock_token_hash=hashed,
            sock_session_version=user.session_version or 0,
        )
        with _CONNECTIONS_LOCK:
            _CONNECTIONS[_sid()] = {"user_id": user.id, "workspace_id": ws.id, "token_hash": hashed}
        return True


def register(socketio: SocketIO) -> None:
    @socketio.on("connect")
    def connect(auth=None):
        # no valid credentials, or a workspace the user is not in: the connection is refused
        if not _accept(auth):
            raise ConnectionRefusedError("authentication required")

    @socketio.on("disconnect")
    def disconnect(reason=None):
        with _CONNECTIONS_LOCK:
            _CONNECTIONS.pop(_sid(), None)

    @socketio.on("join_execution")
    def join_execution(data=None):
        try:
            execution_id = _execution_id(data)
            svc = services()

            def enter():  # its reads tried again on a transient error, as a decision is (joining twice is harmless)
                with svc.db.read() as session:  # another workspace's execution (or none): refused before the room
                    executions.get(session, workspace_id(), execution_id)
                # in the room before the state is read: a change committed after that read is pushed to this client,
                # and one committed before is in it (a change between a read and a later join reached it neither way)
                join_room(execution_room(execution_id))
                with svc.db.read() as session:
                    ex = executions.get(session, workspace_id(), execution_id)
                    tools = svc.tools.for_workspace(ex.workspace_id)
                    # with its gate: a change that leaves status and progress as they were (a decision held for
                    # its undo window) still tells the client its copy is behind
                    return (
                        {**executions.update_event(ex, steps=False), "gate": jsonable(ex.gate)},
                        [
                            coaching.described(session, svc.definitions, tools, s)
                            for s in coaching.pending(session, ex.id)
                        ],
                        executions.stats_of(ex) if ex.mode != "normal" else None,
                    )

            update, waiting, stats = retrying(enter, what=f"joining execution {execution_id}")
            # a reload or a reconnect never loses the pending suggestion: send it to this client at once
            for suggestion in waiting:
                emit("coaching_suggestion", jsonable(suggestion), to=_sid())
            if stats is not None:
                emit("coaching_stats", {"execution_id": execution_id, **stats}, to=_sid())
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
        try:
            asked = data.get("workspace_id") if isinstance(data, dict) else None
            if asked and asked != workspace_id():  # only the workspace this connection was accepted for
                raise NotFound(f"workspace {asked} not found")
            join_room(workspace_room(workspace_id()))
            return {"ok": True, "workspace_id": workspace_id(), "role": role()}
        except Exception as exc:
            return _error(exc)

    @socketio.on("coaching_decision")
    def coaching_decision(data=None):
        try:
            require("operator")
            execution_id = _execution_id(data)
            fields = ("suggestion_id", "decision", "correction", "feedback", "manual_output")
            broken = unstorable_at(data)
            if broken:
                raise BadRequest("request is malformed", details={broken[0]: [broken[1]]})
            try:  # the REST schema, so that both channels accept exactly the same bodies
                body = _DECISION_ARGS.load({k: data[k] for k in fields if k in data})
            except MarshmallowError as exc:
                raise ValidationFailed("request is invalid", details=exc.messages_dict) from None
            # the one retry layer of a decision over the socket (a REST route has api/app.py's)
            return retrying(
                lambda: decisions.submit(
                    services(), workspace_id(), execution_id, body, operator(), data.get("idempotency_key")
                ),
                what=f"the decision on suggestion {body.get('suggestion_id')}",
            )
        except Exception as exc:
            return _error(exc)

    @socketio.on("coaching_undo")
    def coaching_undo(data=None):
        """{execution_id, suggestion_id}: take back a held decision, as POST .../coaching/undo (same answers)."""
        try:
            require("operator")
            execution_id = _execution_id(data)
            try:
                body = _UNDO_ARGS.load({k: data[k] for k in ("suggestion_id",) if k in data})
            except MarshmallowError as exc:
                raise ValidationFailed("request is invalid", details=exc.messages_dict) from None
            return jsonable(
                retrying(
                    lambda: undo.submit(services(), workspace_id(), execution_id, body["suggestion_id"], operator()),
                    what=f"the undo on suggestion {body['suggestion_id']}",
                )
            )
        except Exception as exc:
            return _error(exc)

    def control_event(event: str):
        schema, act = _CONTROL[event]

        def handler(data=None):
            """The REST body plus `execution_id`; ack {ok, execution: <execution-state>} or {ok: false, error}."""
            try:
                require("operator")
                execution_id = _execution_id(data)
                broken = unstorable_at(data)
                if broken:
                    raise BadRequest("request is malformed", details={broken[0]: [broken[1]]})
                try:  # the REST schema: both channels accept exactly the same bodies
                    body = schema.load({k: v for k, v in data.items() if k != "execution_id"})
                except MarshmallowError as exc:
                    raise ValidationFailed("request is invalid", details=exc.messages_dict) from None
                # one transaction, tried again on a transient database error as a REST route is (api.app)
                return {
                    "ok": True,
                    "execution": jsonable(retrying(lambda: act(execution_id, body), what=f"{event} on {execution_id}")),
                }
            except Exception as exc:
                return _error(exc)

        socketio.on_event(event, handler)

    for event in _CONTROL:
        control_event(event)
