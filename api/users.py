"""/api/users: admins manage who is in their workspace and with which role (docs/auth.md, "Members").

Adding someone is an invitation they accept (never a membership made behind their back), answered the same
whether or not the email has an account, so the route tells nobody which emails exist. Everything an admin does
here touches their own workspace only: a member's other workspaces, and their account, are not theirs to change.
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate
from sqlalchemy.orm import Session

from api import sockets
from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import StrictBoolean, one_of
from services.audit import service as audit
from services.models.users import Membership, User, Workspace
from services.offload import off_loop
from services.users import members
from services.users import service as users

blp = Blueprint("users", __name__, url_prefix="/api/users", description="Users of this workspace (admins)")


class MemberSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    role = one_of(users.ROLES, required=True)
    disabled = StrictBoolean(required=True)


class MemberList(Schema):
    items = fields.List(fields.Nested(MemberSchema), required=True)


class NewMember(Schema):
    email = fields.String(required=True, validate=validate.Length(max=254))
    name = fields.String(load_default="")
    password = fields.String(
        load_default=None,
        load_only=True,
        validate=validate.Length(max=1000),
        metadata={
            "description": "creates the account when the email has none (the person logs in with it, then accepts); "
            "never changes an existing account's password"
        },
    )
    role = fields.String(required=True, validate=validate.OneOf(users.ROLES))


class Invited(Schema):
    status = one_of(
        ("invited",),
        metadata={"description": "always `invited`, whether or not the email has an account"},
        required=True,
    )
    email = fields.String(required=True)
    role = one_of(users.ROLES, required=True)


class InvitationSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    role = one_of(users.ROLES, required=True)
    invited_by = fields.String(required=True)
    status = one_of(users.INVITATION_STATUSES, required=True)
    created_at = fields.DateTime(required=True)


class InvitationList(Schema):
    items = fields.List(fields.Nested(InvitationSchema), required=True)


class RoleArgs(Schema):
    role = fields.String(required=True, validate=validate.OneOf(users.ROLES))


def _members(session):
    rows = session.execute(
        User.__table__.select()
        .with_only_columns(User.id, User.email, User.name, Membership.role, Membership.disabled)
        .join_from(User.__table__, Membership.__table__, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id())
        .order_by(User.email)
    )
    return [{"id": r.id, "email": r.email, "name": r.name, "role": r.role, "disabled": bool(r.disabled)} for r in rows]


def _member_view(session, m) -> dict:
    return {**users.user_view(session.get(User, m.user_id)), "role": m.role, "disabled": bool(m.disabled)}


def _workspace(session: Session) -> Workspace:
    """The caller's workspace row (authentication found the caller a member of it)."""
    ws = session.get(Workspace, workspace_id())
    if ws is None:
        raise LookupError(f"workspace {workspace_id()} does not exist")
    return ws


@blp.route("")
class Members(MethodView):
    @requires("admin")
    @blp.response(200, MemberList)
    def get(self):
        with services().db.read() as session:
            return {"items": _members(session)}

    @requires("admin")
    @blp.arguments(NewMember)
    @blp.response(202, Invited)
    def post(self, args):
        """Invite an email to this workspace: 202 `{"status": "invited"}` whether the email has an account, has
        none, or is a member already. The person sees it in `GET /api/auth/invitations` and accepts it."""
        password = args["password"]
        # hashed before the transaction and off the event loop, and whether or not the email has an account
        # (hashing only for a new one would tell, by the time taken, which emails exist)
        hashed = off_loop(users.hash_password, password) if isinstance(password, str) and len(password) >= 8 else None
        with services().command() as uow:
            inv = members.invite(
                uow.session,
                _workspace(uow.session),
                args["email"],
                args["role"],
                operator(),
                password=password,
                name=args["name"],
                password_hash=hashed,
            )
            if inv is not None:
                audit.record(
                    uow.session,
                    workspace_id(),
                    operator(),
                    "invitation_create",
                    target_type="invitation",
                    target_id=inv.id,
                    after={"email": inv.email, "role": inv.role},
                )
            return {"status": "invited", "email": users.check_email(args["email"]), "role": args["role"]}


@blp.route("/invitations")
class Invitations(MethodView):
    @requires("admin")
    @blp.response(200, InvitationList)
    def get(self):
        """This workspace's pending invitations."""
        with services().db.read() as session:
            return {
                "items": [members.invitation_view(i) for i in members.workspace_invitations(session, workspace_id())]
            }


@blp.route("/invitations/<invitation_id>")
class InvitationById(MethodView):
    @requires("admin")
    @blp.response(204)
    def delete(self, invitation_id):
        """Cancel a pending invitation of this workspace."""
        with services().command() as uow:
            inv = members.cancel_invitation(uow.session, workspace_id(), invitation_id)
            audit.record(
                uow.session,
                workspace_id(),
                operator(),
                "invitation_cancel",
                target_type="invitation",
                target_id=inv.id,
                before={"email": inv.email, "role": inv.role},
            )


@blp.route("/<user_id>")
class Member(MethodView):
    @requires("admin")
    @blp.response(204)
    def delete(self, user_id):
        """Remove a member from this workspace (409 for its last admin); their sockets here are disconnected."""
        with services().command() as uow:
            m = members.remove_member(uow.session, workspace_id(), user_id)
            audit.record(
                uow.session,
                workspace_id(),
                operator(),
                "member_remove",
                target_type="user",
                target_id=user_id,
                before={"role": m.role},
            )
        sockets.kick(user_id, workspace_id=workspace_id(), reason="removed")


@blp.route("/<user_id>/role")
class MemberRole(MethodView):
    @requires("admin")
    @blp.arguments(RoleArgs)
    @blp.response(200, MemberSchema)
    def put(self, args, user_id):
        """Change a member's role (409 when it would leave the workspace without an admin). Open sockets act
        with the new role from their next event on."""
        with services().command() as uow:
            m, before = members.change_role(uow.session, workspace_id(), user_id, args["role"])
            audit.record(
                uow.session,
                workspace_id(),
                operator(),
                "user_change",
                target_type="user",
                target_id=user_id,
                before={"role": before},
                after={"role": args["role"]},
            )
            return _member_view(uow.session, m)


def _set_disabled(member_id: str, disabled: bool) -> dict:
    with services().command() as uow:
        m = members.set_member_disabled(uow.session, workspace_id(), member_id, disabled)
        audit.record(
            uow.session,
            workspace_id(),
            operator(),
            "member_disable" if disabled else "member_enable",
            target_type="user",
            target_id=member_id,
            after={"disabled": disabled},
        )
        view = _member_view(uow.session, m)
    if disabled:
        sockets.kick(member_id, workspace_id=workspace_id(), reason="disabled")
    return view


@blp.route("/<user_id>/disable")
class DisableMember(MethodView):
    @requires("admin")
    @blp.response(200, MemberSchema)
    def post(self, user_id):
        """The member can no longer act in this workspace (their account and other workspaces are untouched);
        409 for the last admin. Their sockets here are disconnected."""
        return _set_disabled(user_id, True)


@blp.route("/<user_id>/enable")
class EnableMember(MethodView):
    @requires("admin")
    @blp.response(200, MemberSchema)
    def post(self, user_id):
        return _set_disabled(user_id, False)


@blp.route("/<user_id>/tokens")
class MemberTokens(MethodView):
    @requires("admin")
    @blp.response(204)
    def delete(self, user_id):
        """The member's bearer tokens made until now stop working in this workspace; their token sockets here are
        disconnected. Tokens they make afterwards work again (disable the member to keep them out)."""
        with services().command() as uow:
            members.revoke_member_tokens(uow.session, workspace_id(), user_id)
            audit.record(
                uow.session, workspace_id(), operator(), "member_tokens_revoke", target_type="user", target_id=user_id
            )
        sockets.kick(user_id, workspace_id=workspace_id(), tokens_only=True)
