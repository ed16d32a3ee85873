"""/api/auth: log in and out, who am I, bearer tokens, the caller's invitations. Each request's authentication is
api/authentication.py."""

from __future__ import annotations

from flask import g, request, session
from flask.views import MethodView
from marshmallow import Schema, fields, validate
from sqlalchemy import select
from sqlalchemy.orm import Session

from api import authentication, security, sockets
from api.base import Blueprint
from api.context import services, user_id
from api.schemas import one_of
from core.errors import Unauthorized
from services.audit import service as audit
from services.models.users import Membership, User, Workspace
from services.users import members, tokens
from services.users import service as users

blp = Blueprint("auth", __name__, url_prefix="/api/auth", description="Log in, tokens")


class LoginArgs(Schema):
    email = fields.String(required=True, validate=validate.Length(max=254))
    password = fields.String(required=True, load_only=True, validate=validate.Length(max=1000))
    workspace = fields.String(load_default=None, metadata={"description": "workspace id or slug to start in"})


class WorkspaceRole(Schema):
    id = fields.String(required=True)
    slug = fields.String(required=True)
    name = fields.String(required=True)
    role = one_of(users.ROLES, required=True)


class UserSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(allow_none=True)


class WorkspaceRef(Schema):
    id = fields.String(required=True)
    slug = fields.String(required=True)
    name = fields.String(required=True)


class MeSchema(Schema):
    user = fields.Nested(UserSchema, required=True)
    workspaces = fields.List(fields.Nested(WorkspaceRole), required=True)
    workspace_id = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "the workspace the session uses when a request names none"},
    )
    role = one_of(users.ROLES, allow_none=True, metadata={"description": "the user's role in `workspace_id`"})
    csrf_token = fields.String(allow_none=True)
    disabled_workspaces = fields.List(
        fields.Nested(WorkspaceRef),
        metadata={
            "description": "workspaces where an admin disabled the user's membership (they cannot act there until an "
            "admin of that workspace enables them again)"
        },
    )


class TokenArgs(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))


class TokenSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    token = fields.String(metadata={"description": "shown only when the token is created"})
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(allow_none=True, required=True)
    revoked_at = fields.DateTime(allow_none=True, required=True)


class TokenList(Schema):
    items = fields.List(fields.Nested(TokenSchema), required=True)


class InvitationWorkspace(Schema):
    id = fields.String(required=True)
    slug = fields.String(required=True)
    name = fields.String(required=True)


class MyInvitation(Schema):
    id = fields.String(required=True)
    workspace = fields.Nested(InvitationWorkspace, required=True)
    role = one_of(users.ROLES, required=True)
    invited_by = fields.String(required=True)
    status = one_of(users.INVITATION_STATUSES, required=True)
    created_at = fields.DateTime(required=True)


class MyInvitationList(Schema):
    items = fields.List(fields.Nested(MyInvitation), required=True)


class Accepted(Schema):
    invitation = fields.Nested(MyInvitation)
    workspace = fields.Nested(WorkspaceRole)


def _me(db_session, user: User) -> dict:
    return {
        "user": users.user_view(user),
        "workspaces": [
            {"id": ws.id, "slug": ws.slug, "name": ws.name, "role": r} for ws, r in users.memberships(db_session, user)
        ],
        "workspace_id": g.get("workspace_id"),
        "role": g.get("role"),
        "csrf_token": session.get("csrf"),
        "disabled_workspaces": _disabled_workspaces(db_session, user),
    }


def _disabled_workspaces(db_session, user: User) -> list[dict]:
    """Where an admin disabled the user: the web app tells them so (and whom to ask) instead of a blank app."""
    rows = db_session.execute(
        select(Workspace)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .where(Membership.user_id == user.id, Membership.disabled.is_(True))
        .order_by(Workspace.name)
    )
    return [{"id": ws.id, "slug": ws.slug, "name": ws.name} for (ws,) in rows]


@blp.route("/login")
class Login(MethodView):
    @blp.doc(security=[])  # public: it is how a session starts
    @blp.arguments(LoginArgs)
    @blp.response(200, MeSchema)
    def post(self, args):
        svc = services()
        address = request.remote_addr or "?"
        try:
            authenticated = users.authenticate(svc.db, args["email"], args["password"])
            with svc.command() as uow:
                user = uow.session.get(User, authenticated)
                if user is None or user.disabled:  # gone or disabled since its password was checked
                    raise Unauthorized("wrong email or password", code="invalid_credentials")
                g.user_id, g.email = user.id, user.email
                authentication.pick_workspace(uow.session, user, args.get("workspace"))
                if args.get("workspace") and g.workspace_id:
                    user.default_workspace_id = g.workspace_id  # the user's own choice: where they land next
                session.clear()
                session.update(
                    user_id=user.id,
                    workspace_id=g.workspace_id,
                    csrf=security.new_csrf_token(),
                    sv=user.session_version or 0,
                )
                session.permanent = True
                if g.workspace_id:
                    audit.record(
                        uow.session, g.workspace_id, user.email, "login", target_type="user", target_id=user.id
                    )
                return _me(uow.session, user)
        except Unauthorized:  # counted by the login limiter (api/security.py) as the 401 goes out
            _audit_failed_login(args["email"], address)
            raise


def _audit_failed_login(email: str, address: str) -> None:
    """A failed login is audited in every workspace the email's user is a member of (each workspace's admins
    see attempts on their members; the chain is per workspace). An unknown email has no workspace: nothing is
    written, and the answer is the same 401 either way. The password is never recorded."""
    with services().command() as uow:
        user = uow.session.query(User).filter(User.email == (email or "").strip().lower()).one_or_none()
        if user is None:
            return
        for ws, _role in users.memberships(uow.session, user):
            audit.record(
                uow.session,
                ws.id,
                user.email,
                "login_failed",
                target_type="user",
                target_id=user.id,
                after={"address": address},
                result="denied",
            )


def _caller(db_session: Session) -> User:
    """The caller's user row (authentication found it before the view ran: one deleted since is signed out)."""
    user = db_session.get(User, user_id())
    if user is None:
        raise Unauthorized("authentication required: log in or send a bearer token", code="unauthorized")
    return user


@blp.route("/logout")
class Logout(MethodView):
    @blp.response(204)
    def post(self):
        """End the session: every session cookie of this user stops working (copies included, on every
        device), and their cookie-authenticated sockets are disconnected. Bearer tokens are not affected."""
        uid = user_id()
        with services().command() as uow:
            user = _caller(uow.session)
            if g.get("auth") == "cookie":
                tokens.end_sessions(uow.session, user)
            if g.get("workspace_id"):
                audit.record(uow.session, g.workspace_id, user.email, "logout", target_type="user", target_id=uid)
        session.clear()
        if g.get("auth") == "cookie":
            sockets.kick(uid, cookie_only=True)


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, MeSchema)
    def get(self):
        with services().db.read() as db_session:
            return _me(db_session, _caller(db_session))


@blp.route("/tokens")
class Tokens(MethodView):
    @blp.response(200, TokenList)
    def get(self):
        with services().db.read() as db_session:
            user = _caller(db_session)
            return {"items": [_token(t) for t in tokens.list_tokens(db_session, user)]}

    @blp.arguments(TokenArgs)
    @blp.response(201, TokenSchema)
    def post(self, args):
        with services().command() as uow:
            user = _caller(uow.session)
            token, secret = tokens.create_token(uow.session, user, args["name"])
            if g.get("workspace_id"):
                audit.record(
                    uow.session,
                    g.workspace_id,
                    user.email,
                    "token_create",
                    target_type="token",
                    target_id=token.id,
                    after={"name": token.name},
                )
            return {**_token(token), "token": secret}


@blp.route("/tokens/<token_id>")
class TokenById(MethodView):
    @blp.response(204)
    def delete(self, token_id):
        with services().command() as uow:
            user = _caller(uow.session)
            token = tokens.revoke_token(uow.session, user, token_id)
            hashed = token.token_hash
            if g.get("workspace_id"):
                audit.record(
                    uow.session, g.workspace_id, user.email, "token_revoke", target_type="token", target_id=token.id
                )
        sockets.kick(user.id, token_hash=hashed)  # its open sockets stop at once


@blp.route("/invitations")
class MyInvitations(MethodView):
    @blp.response(200, MyInvitationList)
    def get(self):
        """The caller's pending invitations to other workspaces (works with no workspace at all)."""
        with services().db.read() as db_session:
            user = _caller(db_session)
            return {
                "items": [members.invitation_view(inv, ws) for inv, ws in members.invitations_for(db_session, user)]
            }


@blp.route("/invitations/<invitation_id>/accept")
class AcceptInvitation(MethodView):
    @blp.response(200, Accepted)
    def post(self, invitation_id):
        """Join the workspace with the invited role. The caller's default workspace does not change (unless
        they had none); pick the new one with X-Coach-Workspace or at login."""
        with services().command() as uow:
            user = _caller(uow.session)
            inv, m = members.accept_invitation(uow.session, user, invitation_id)
            ws = uow.session.get(Workspace, inv.workspace_id)
            if ws is None:  # (the invitation's foreign key keeps it)
                raise LookupError(f"workspace {inv.workspace_id} does not exist")
            audit.record(
                uow.session,
                ws.id,
                user.email,
                "invitation_accept",
                target_type="invitation",
                target_id=inv.id,
                after={"email": user.email, "role": m.role},
            )
            return {
                "invitation": members.invitation_view(inv, ws),
                "workspace": {"id": ws.id, "slug": ws.slug, "name": ws.name, "role": m.role},
            }


@blp.route("/invitations/<invitation_id>/decline")
class DeclineInvitation(MethodView):
    @blp.response(204)
    def post(self, invitation_id):
        with services().command() as uow:
            user = _caller(uow.session)
            inv = members.decline_invitation(uow.session, user, invitation_id)
            audit.record(
                uow.session,
                inv.workspace_id,
                user.email,
                "invitation_decline",
                target_type="invitation",
                target_id=inv.id,
                after={"email": user.email},
            )


def _token(t) -> dict:
    return {
        "id": t.id,
        "name": t.name,
        "created_at": t.created_at,
        "last_used_at": t.last_used_at,
        "revoked_at": t.revoked_at,
    }
