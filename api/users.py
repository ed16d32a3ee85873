"""/api/users: admins manage who is in their workspace and with which role."""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from core.errors import NotFound
from services import audit, users
from services.models import Membership, User, Workspace

blp = Blueprint("users", __name__, url_prefix="/api/users", description="Users of this workspace (admins)")


class MemberSchema(Schema):
    id = fields.String()
    email = fields.String()
    name = fields.String()
    role = fields.String()


class MemberList(Schema):
    items = fields.List(fields.Nested(MemberSchema))


class NewMember(Schema):
    email = fields.String(required=True, validate=validate.Length(max=254))
    name = fields.String(load_default="")
    password = fields.String(load_default=None, load_only=True,
                             metadata={"description": "required for a new user; omitted to add an existing one"})
    role = fields.String(required=True, validate=validate.OneOf(users.ROLES))


class RoleArgs(Schema):
    role = fields.String(required=True, validate=validate.OneOf(users.ROLES))


def _members(session):
    rows = session.execute(
        User.__table__.select().with_only_columns(User.id, User.email, User.name, Membership.role)
        .join_from(User.__table__, Membership.__table__, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id()).order_by(User.email))
    return [{"id": r.id, "email": r.email, "name": r.name, "role": r.role} for r in rows]


@blp.route("")
class Members(MethodView):
    @requires("admin")
    @blp.response(200, MemberList)
    def get(self):
        with services().db.read() as session:
            return {"items": _members(session)}

    @requires("admin")
    @blp.arguments(NewMember)
    @blp.response(201, MemberSchema)
    def post(self, args):
        with services().db.transaction() as session:
            user = session.query(User).filter(User.email == args["email"].strip().lower()).one_or_none()
            if user is None:
                user = users.create_user(session, args["email"], args["password"] or "", args["name"])
            users.set_role(session, user, session.get(Workspace, workspace_id()), args["role"])
            audit.record(session, workspace_id(), operator(), "user_change", target_type="user",
                         target_id=user.id, after={"email": user.email, "role": args["role"]})
            return {**users.user_view(user), "role": args["role"]}


@blp.route("/<user_id>/role")
class MemberRole(MethodView):
    @requires("admin")
    @blp.arguments(RoleArgs)
    @blp.response(200, MemberSchema)
    def put(self, args, user_id):
        with services().db.transaction() as session:
            user = session.get(User, user_id)
            before = users.role_in(session, user, workspace_id()) if user else None
            if user is None or before is None:
                raise NotFound(f"user {user_id} not found")
            users.set_role(session, user, session.get(Workspace, workspace_id()), args["role"])
            audit.record(session, workspace_id(), operator(), "user_change", target_type="user",
                         target_id=user.id, before={"role": before}, after={"role": args["role"]})
            return {**users.user_view(user), "role": args["role"]}
