"""The authentication of every /api request but the public ones: a bearer token, or the session cookie with the CSRF
header on writes; and the workspace the request acts in. The routes that log in and out and make tokens are
api/auth.py.
"""

from __future__ import annotations

import hmac

from flask import current_app, g, request, session

from api.context import services
from core.errors import Forbidden, Unauthorized
from services.db import retrying
from services.models.users import User
from services.users import service as users
from services.users import tokens

# /api/hooks/: incoming webhooks, authenticated by their signature (api/triggers.py); /api/integrations/: called by
# other systems, which sign their requests (api/slack.py checks Slack's signature)
PUBLIC = ("/api/auth/login", "/api/openapi.json", "/api/docs", "/api/hooks/", "/api/integrations/")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
CSRF_COOKIE = "coach_csrf"


def pick_workspace(
    db_session, user: User, wanted: str | None, remembered: str | None = None, token_created_at=None
) -> None:
    """The workspace the request acts in (g.workspace_id) and the user's role there (g.role), or None, None."""
    picked = users.pick_workspace(db_session, user, wanted, remembered, token_created_at)
    g.workspace_id, g.role = (picked[0].id, picked[1]) if picked else (None, None)


def authenticate_request() -> None:
    """Before every /api request but the public ones: bearer token, or session cookie (+ CSRF on writes)."""
    if not request.path.startswith("/api/") or request.path.startswith(PUBLIC):
        return
    svc = services()
    header = request.headers.get("Authorization", "")
    # the request's first statement: tried again on a new connection when the pooled one was gone (services.db)
    retrying(lambda: _authenticate(svc, header), tries=4, what="authenticating a request")


def _authenticate(svc, header: str) -> None:
    with svc.db.read() as db_session:
        made_at = None
        if header.lower().startswith("bearer "):
            found = tokens.token_and_user(db_session, header[7:].strip())
            if found is None:
                raise Unauthorized("the bearer token is unknown or revoked", code="unauthorized")
            user, made_at = found[1], found[0].created_at
            g.auth = "token"
        else:
            user = db_session.get(User, session.get("user_id") or "")
            # a cookie issued before the user's last logout (a copy of it included) is dead: session version
            if user is None or user.disabled or session.get("sv", 0) != (user.session_version or 0):
                raise Unauthorized("authentication required: log in or send a bearer token", code="unauthorized")
            g.auth = "cookie"
            if request.method in WRITES and not _csrf_ok():
                raise Forbidden("missing or wrong X-CSRF-Token header", code="csrf_failed")
        g.user_id, g.email = user.id, user.email
        pick_workspace(db_session, user, request.headers.get("X-Coach-Workspace"), session.get("workspace_id"), made_at)


def _csrf_ok() -> bool:
    # the token lives in the (signed) session; the readable coach_csrf cookie only hands it to the web app
    sent, expected = request.headers.get("X-CSRF-Token", ""), session.get("csrf") or ""
    return bool(sent) and bool(expected) and hmac.compare_digest(sent, expected)


def set_csrf_cookie(response):
    """After each request: the web app reads coach_csrf to send it back as X-CSRF-Token. Not on the web app's
    hashed files, which are cached for everyone (security.SessionInterface)."""
    if g.get("cookieless", False):
        return response
    token = session.get("csrf")
    if token and request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(
            CSRF_COOKIE,
            token,
            httponly=False,
            samesite="Lax",
            secure=current_app.config.get("SESSION_COOKIE_SECURE", False),
        )
    elif not token and CSRF_COOKIE in request.cookies:
        response.delete_cookie(CSRF_COOKIE)
    return response
