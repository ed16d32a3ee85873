"""Who a request acts as: the app's services, the caller, their workspace and role (docs/auth.md).

HTTP requests are authenticated by api/authentication.py before the view runs; Socket.IO events by the identity
the connection was accepted with (kept in the connection's session).
"""

from __future__ import annotations

import functools

from flask import current_app, g, request, session

from core.errors import Forbidden, Unauthorized
from services.container import Services
from services.users.service import RANK
from services.users.tokens import connection_role

SOCKET_KEYS = ("sock_user_id", "sock_email", "sock_workspace_id", "sock_role")


def services() -> Services:
    return current_app.extensions["coach"]


def tools():
    """The tool registry the caller's workspace sees: the server's tools and its own MCP servers' tools."""
    return services().tools.for_workspace(workspace_id())


def _identity() -> None:
    if "user_id" in g:
        return
    if getattr(request, "sid", None) and session.get("sock_user_id"):  # a Socket.IO event
        # A connection lives longer than a request: re-authorised at every event (revoked token, logout, removed
        # or disabled member: refused; a changed role: the new one). The server also disconnects such sockets
        # at once (api/sockets.py, kick); this check covers a connection held by another server process.
        current = connection_role(
            services().db,
            session["sock_user_id"],
            session["sock_workspace_id"],
            session_version=session.get("sock_session_version"),
            hashed=session.get("sock_token_hash"),
        )
        if current is None:
            raise Unauthorized("this connection's credentials are no longer valid", code="unauthorized")
        g.user_id, g.email = session["sock_user_id"], session["sock_email"]
        g.workspace_id, g.role = session["sock_workspace_id"], current
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


def requires(minimum: str):
    """`require` as a decorator, placed above `@blp.arguments` so that a caller whose role is too low gets
    403 before the body is even parsed (and never a 422 that tells them about the route's fields)."""

    def decorate(view):
        @functools.wraps(view)  # keeps flask-smorest's _apidoc, so the OpenAPI document is unchanged
        def checked(*args, **kwargs):
            require(minimum)
            return view(*args, **kwargs)

        return checked

    return decorate


def operator() -> str:
    """The name decisions and audit events are attributed to."""
    _identity()
    return g.email
