"""/api/auth: log in and out, who am I, bearer tokens; and the authentication of every /api request."""
from __future__ import annotations

import hmac

from flask import current_app, g, request, session
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api import security
from api.base import Blueprint
from api.context import services, user_id
from core.errors import Forbidden, Unauthorized
from services import audit, users
from services.models import User

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Log in, tokens")
PUBLIC = ("/api/auth/login", "/api/openapi.json", "/api/docs")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
CSRF_COOKIE = "coach_csrf"


class LoginArgs(Schema):
    email = fields.String(required=True, validate=validate.Length(max=254))
    password = fields.String(required=True, load_only=True, validate=validate.Length(max=1000))
    workspace = fields.String(load_default=None, metadata={"description": "workspace id or slug to start in"})


class WorkspaceRole(Schema):
    id = fields.String()
    slug = fields.String()
    name = fields.String()
    role = fields.String()


class UserSchema(Schema):
    id = fields.String()
    email = fields.String()
    name = fields.String()


class MeSchema(Schema):
    user = fields.Nested(UserSchema)
    workspaces = fields.List(fields.Nested(WorkspaceRole))
    workspace_id = fields.String(allow_none=True)
    role = fields.String(allow_none=True)
    csrf_token = fields.String(allow_none=True)


class TokenArgs(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))


class TokenSchema(Schema):
    id = fields.String()
    name = fields.String()
    token = fields.String(metadata={"description": "shown only when the token is created"})
    created_at = fields.DateTime()
    last_used_at = fields.DateTime(allow_none=True)
    revoked_at = fields.DateTime(allow_none=True)


class TokenList(Schema):
    items = fields.List(fields.Nested(TokenSchema))


def _me(db_session, user: User) -> dict:
    return {"user": users.user_view(user),
            "workspaces": [{"id": ws.id, "slug": ws.slug, "name": ws.name, "role": r}
                           for ws, r in users.memberships(db_session, user)],
            "workspace_id": g.get("workspace_id"), "role": g.get("role"), "csrf_token": session.get("csrf")}


def _pick_workspace(db_session, user: User, wanted: str | None, remembered: str | None = None) -> None:
    picked = users.pick_workspace(db_session, user, wanted, remembered)
    g.workspace_id, g.role = (picked[0].id, picked[1]) if picked else (None, None)


def authenticate_request() -> None:
    """Before every /api request but the public ones: bearer token, or session cookie (+ CSRF on writes)."""
    if not request.path.startswith("/api/") or request.path.startswith(PUBLIC):
        return
    svc = services()
    header = request.headers.get("Authorization", "")
    with svc.db.read() as db_session:
        if header.lower().startswith("bearer "):
            user = users.user_for_token(db_session, header[7:].strip())
            if user is None:
                raise Unauthorized("the bearer token is unknown or revoked", code="unauthorized")
            g.auth = "token"
        else:
            user = db_session.get(User, session.get("user_id") or "")
            if user is None or user.disabled:
                raise Unauthorized("authentication required: log in or send a bearer token", code="unauthorized")
            g.auth = "cookie"
            if request.method in WRITES and not _csrf_ok():
                raise Forbidden("missing or wrong X-CSRF-Token header", code="csrf_failed")
        g.user_id, g.email = user.id, user.email
        _pick_workspace(db_session, user, request.headers.get("X-Coach-Workspace"), session.get("workspace_id"))


def _csrf_ok() -> bool:
    # the token lives in the (signed) session; the readable coach_csrf cookie only hands it to the web app
    sent, expected = request.headers.get("X-CSRF-Token", ""), session.get("csrf") or ""
    return bool(sent) and bool(expected) and hmac.compare_digest(sent, expected)


def set_csrf_cookie(response):
    """After each request: the web app reads coach_csrf to send it back as X-CSRF-Token."""
    token = session.get("csrf")
    if token and request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(CSRF_COOKIE, token, httponly=False, samesite="Lax",
                            secure=current_app.config.get("SESSION_COOKIE_SECURE", False))
    elif not token and CSRF_COOKIE in request.cookies:
        response.delete_cookie(CSRF_COOKIE)
    return response


@blp.route("/login")
class Login(MethodView):
    @blp.arguments(LoginArgs)
    @blp.response(200, MeSchema)
    def post(self, args):
        svc = services()
        limiter = current_app.extensions["coach_login_limiter"]
        address = request.remote_addr or "?"
        retry_after = limiter.check(args["email"], address)
        if retry_after:
            return security.too_many(retry_after)
        with svc.db.transaction() as db_session:
            try:
                user = users.authenticate(db_session, args["email"], args["password"])
            except Unauthorized:
                limiter.failed(args["email"], address)
                raise
            limiter.succeeded(args["email"], address)
            g.user_id, g.email = user.id, user.email
            _pick_workspace(db_session, user, args.get("workspace"))
            session.clear()
            session.update(user_id=user.id, workspace_id=g.workspace_id, csrf=security.new_csrf_token())
            session.permanent = True
            if g.workspace_id:
                audit.record(db_session, g.workspace_id, user.email, "login", target_type="user", target_id=user.id)
            return _me(db_session, user)


@blp.route("/logout")
class Logout(MethodView):
    @blp.response(204)
    def post(self):
        user_id()
        session.clear()


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, MeSchema)
    def get(self):
        with services().db.read() as db_session:
            return _me(db_session, db_session.get(User, user_id()))


@blp.route("/tokens")
class Tokens(MethodView):
    @blp.response(200, TokenList)
    def get(self):
        with services().db.read() as db_session:
            user = db_session.get(User, user_id())
            return {"items": [_token(t) for t in users.list_tokens(db_session, user)]}

    @blp.arguments(TokenArgs)
    @blp.response(201, TokenSchema)
    def post(self, args):
        with services().db.transaction() as db_session:
            user = db_session.get(User, user_id())
            token, secret = users.create_token(db_session, user, args["name"])
            if g.get("workspace_id"):
                audit.record(db_session, g.workspace_id, user.email, "token_create", target_type="token",
                             target_id=token.id, after={"name": token.name})
            return {**_token(token), "token": secret}


@blp.route("/tokens/<token_id>")
class TokenById(MethodView):
    @blp.response(204)
    def delete(self, token_id):
        with services().db.transaction() as db_session:
            user = db_session.get(User, user_id())
            token = users.revoke_token(db_session, user, token_id)
            if g.get("workspace_id"):
                audit.record(db_session, g.workspace_id, user.email, "token_revoke", target_type="token",
                             target_id=token.id)


def _token(t) -> dict:
    return {"id": t.id, "name": t.name, "created_at": t.created_at, "last_used_at": t.last_used_at,
            "revoked_at": t.revoked_at}
