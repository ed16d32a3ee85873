"""Who a request acts as: the app's services, the caller, their workspace and role (docs/auth.md).

HTTP requests are authenticated by api/auth.py before the view runs; Socket.IO events by the identity
the connection was accepted with (kept in the connection's session).
"""
from __future__ import annotations

from flask import current_app, g, request, session

from core.errors import Forbidden, Unauthorized
from services.container import Services
from services.users import RANK

SOCKET_KEYS = ("sock_user_id", "sock_email", "sock_workspace_id", "sock_role")


def services() -> Services:
    return current_app.extensions["coach"]


def _identity() -> None:
    if "user_id" in g:
        return
    if getattr(request, "sid", None) and session.get("sock_user_id"):  # a Socket.IO event
        g.user_id, g.email = session["sock_user_id"], session["sock_email"]
        g.workspace_id, g.role = session["sock_workspace_id"], session["sock_role"]
        return
    raise Unauthorized("authentication required: log in or send a bearer token", code="unauthorized")


def user_id() -> str:
    _identity()
    return g.user_id


def workspace_id() -> str:
    _identity()
    if not g.workspace_id:
        raise Forbidden("you are not a member of any workspace")
    return g.workspace_id


def role() -> str:
    _identity()
    return g.role


def require(minimum: str) -> None:
    """Refuse (403) a caller whose role in this workspace is below `minimum`."""
    workspace_id()
    if RANK.get(g.role, -1) < RANK[minimum]:
        raise Forbidden(f"this needs the {minimum} role; you are {g.role}", details={"role": g.role})


def operator() -> str:
    """The name decisions and audit events are attributed to."""
    _identity()
    return g.email
