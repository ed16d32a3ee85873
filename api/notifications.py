"""/api/notifications: a person's own settings; a workspace's routes and outgoing webhook endpoints (admin)."""

from __future__ import annotations

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, user_id, workspace_id
from api.schemas import StrictBoolean, always_sent
from core import notifications as N
from services.notifications import push, webhooks
from services.notifications import settings as prefs

blp = Blueprint(
    "notifications",
    __name__,
    url_prefix="/api/notifications",
    description="Notifications: your settings, the workspace's routes and webhook endpoints",
)


def Kind(**kwargs) -> fields.String:  # noqa: N802  (a field, as marshmallow's are named)
    return fields.String(validate=validate.OneOf(N.KINDS), **kwargs)


def Clock() -> fields.String:  # noqa: N802
    return fields.String(
        allow_none=True,
        validate=validate.Regexp(r"^([01]\d|2[0-3]):[0-5]\d$"),
        metadata={"description": "HH:MM in the person's time zone"},
    )


KindSwitches = Schema.from_dict({kind: StrictBoolean() for kind in N.KINDS}, name="KindSwitches")


class SettingsIn(Schema):
    email = StrictBoolean(load_default=True)
    kinds = fields.Nested(KindSwitches, load_default=dict, metadata={"description": "email on/off per event kind"})
    push = StrictBoolean(load_default=True, metadata={"description": "Web Push to the browsers you subscribed"})
    push_kinds = fields.Nested(
        KindSwitches, load_default=dict, metadata={"description": "Web Push on/off per event kind"}
    )
    quiet_start = Clock()
    quiet_end = Clock()
    timezone = fields.String(load_default="UTC", validate=validate.Length(max=64))


@always_sent()
class SettingsOut(SettingsIn):
    kinds_available = fields.List(Kind())
    email_available = fields.Boolean(
        metadata={
            "description": "whether this server can send email at all "
            "(COACH_SMTP_HOST is set); false: nothing is mailed"
        }
    )


# a channel id (C…, or G… for a private one) or a #name as Slack allows it (lowercase, digits, - _ .; 80 at most)
SLACK_CHANNEL = r"^(|[CG][A-Z0-9]{2,30}|#[a-z0-9][a-z0-9._-]{0,79})$"


class RouteIn(Schema):
    name = fields.String(load_default="", validate=validate.Length(max=200))
    events = fields.List(Kind(), load_default=list)
    workflow_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=32))
    tool = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=200),
        metadata={"description": "a tool name or glob (sql.*)"},
    )
    users = fields.List(
        fields.String(validate=validate.Length(max=254)),
        load_default=list,
        validate=validate.Length(max=100),
        metadata={"description": "emails or user ids"},
    )
    endpoint_id = fields.String(load_default=None, allow_none=True)
    escalate_after_s = fields.Float(load_default=None, allow_none=True, validate=validate.Range(min=1, max=30 * 86400))
    escalate_users = fields.List(
        fields.String(validate=validate.Length(max=254)), load_default=list, validate=validate.Length(max=100)
    )
    escalate_endpoint_id = fields.String(load_default=None, allow_none=True)
    slack_channel = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Regexp(SLACK_CHANNEL, error="must be a Slack channel id (C0123ABCD) or a #channel-name"),
        metadata={
            "description": "the Slack channel the route's reviews are posted to instead of the Slack app's "
            "default channel: a channel id (C…, G… private) or a #name; empty or null: none"
        },
    )
    enabled = StrictBoolean(load_default=True)


@always_sent()
class RouteOut(RouteIn):
    id = fields.String()
    created_at = fields.DateTime()


class RouteList(Schema):
    items = fields.List(fields.Nested(RouteOut), required=True)


class EndpointIn(Schema):
    name = fields.String(load_default="", validate=validate.Length(max=200))
    url = fields.String(
        required=True, validate=[validate.Length(max=2000), validate.URL(schemes={"http", "https"}, require_tld=False)]
    )
    events = fields.List(Kind(), load_default=list)
    enabled = StrictBoolean(load_default=True)
    secret = fields.String(
        load_only=True,
        validate=[
            validate.Length(min=16, max=256),
            validate.Regexp(r"^[\x21-\x7e]+$", error="printable ASCII without spaces"),
        ],
        metadata={"description": "your own signing secret (16-256 printable characters); left out: Coach makes one"},
    )


class EndpointUpdate(Schema):
    name = fields.String(validate=validate.Length(max=200))
    url = fields.String(
        validate=[validate.Length(max=2000), validate.URL(schemes={"http", "https"}, require_tld=False)]
    )
    events = fields.List(Kind())
    enabled = StrictBoolean()


class DeliveryOut(Schema):
    id = fields.String(metadata={"description": "the delivery id (X-Coach-Delivery)"}, required=True)
    event = Kind(required=True)
    event_id = fields.String(required=True)
    status = fields.String(validate=validate.OneOf(N.STATUSES), required=True)
    attempts = fields.Integer(required=True)
    next_attempt_at = fields.DateTime(allow_none=True, required=True)
    last_status = fields.Integer(allow_none=True, required=True)
    last_error = fields.String(allow_none=True, required=True)
    sent_at = fields.DateTime(allow_none=True, required=True)
    created_at = fields.DateTime(required=True)


class EndpointOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    url = fields.String(required=True)
    events = fields.List(Kind(), required=True)
    enabled = StrictBoolean(required=True)
    failing = StrictBoolean(metadata={"description": "its last delivery failed"}, required=True)
    consecutive_failures = fields.Integer(required=True)
    last_status = fields.Integer(allow_none=True, required=True)
    last_error = fields.String(allow_none=True, required=True)
    last_delivery_at = fields.DateTime(allow_none=True, required=True)
    created_at = fields.DateTime(required=True)
    deliveries = fields.List(fields.Nested(DeliveryOut), metadata={"description": "the last ten"}, required=True)
    secret = fields.String(metadata={"description": "only in the answer that made it: keep it, it is not shown again"})


class EndpointList(Schema):
    items = fields.List(fields.Nested(EndpointOut), required=True)


class PushKeyOut(Schema):
    public_key = fields.String(
        metadata={"description": "the VAPID public key (base64url): PushManager.subscribe's applicationServerKey"},
        required=True,
    )


class PushKeys(Schema):
    p256dh = fields.String(required=True, validate=validate.Length(min=80, max=200))
    auth = fields.String(required=True, validate=validate.Length(min=16, max=100))


class PushSubscriptionIn(Schema):
    """A browser's PushSubscription, as its toJSON() gives it."""

    endpoint = fields.String(
        required=True, validate=[validate.Length(max=2000), validate.URL(schemes={"http", "https"}, require_tld=False)]
    )
    keys = fields.Nested(PushKeys, required=True)
    expirationTime = fields.Float(load_default=None, allow_none=True)  # noqa: N815  (the browser's name)


class PushEndpointIn(Schema):
    endpoint = fields.String(required=True, validate=validate.Length(max=2000))


class PushSubscriptionOut(Schema):
    id = fields.String(required=True)
    endpoint = fields.String(required=True)
    user_agent = fields.String(required=True)
    last_status = fields.Integer(
        allow_none=True, metadata={"description": "the push service's last answer"}, required=True
    )
    last_sent_at = fields.DateTime(allow_none=True, required=True)
    created_at = fields.DateTime(required=True)


class PushSubscriptionList(Schema):
    items = fields.List(fields.Nested(PushSubscriptionOut), required=True)


@blp.route("/settings")
class Settings(MethodView):
    @blp.response(200, SettingsOut)
    def get(self):
        svc = services()
        with svc.db.read() as session:
            return {**prefs.get_prefs(session, user_id()), "email_available": bool(svc.settings.smtp_host)}

    @blp.arguments(SettingsIn)
    @blp.response(200, SettingsOut)
    def put(self, body):
        svc = services()
        with svc.command() as uow:
            return {**prefs.put_prefs(uow.session, user_id(), body), "email_available": bool(svc.settings.smtp_host)}


@blp.route("/routes")
class Routes(MethodView):
    @requires("admin")
    @blp.response(200, RouteList)
    def get(self):
        with services().db.read() as session:
            return {"items": prefs.list_routes(session, workspace_id())}

    @requires("admin")
    @blp.arguments(RouteIn)
    @blp.response(201, RouteOut)
    def post(self, body):
        with services().command() as uow:
            return prefs.save_route(uow.session, workspace_id(), body, operator())


@blp.route("/routes/<route_id>")
class RouteById(MethodView):
    @requires("admin")
    @blp.arguments(RouteIn)
    @blp.response(200, RouteOut)
    def put(self, body, route_id):
        with services().command() as uow:
            return prefs.save_route(uow.session, workspace_id(), body, operator(), route_id)

    @requires("admin")
    @blp.response(204)
    def delete(self, route_id):
        with services().command() as uow:
            prefs.delete_route(uow.session, workspace_id(), route_id, operator())


@blp.route("/webhooks")
class Endpoints(MethodView):
    @requires("admin")
    @blp.response(200, EndpointList)
    def get(self):
        with services().db.read() as session:
            return {"items": webhooks.list_endpoints(session, workspace_id())}

    @requires("admin")
    @blp.arguments(EndpointIn)
    @blp.response(201, EndpointOut)
    def post(self, body):
        with services().command() as uow:
            return webhooks.create(uow.session, services().settings, workspace_id(), body, operator())


@blp.route("/webhooks/<endpoint_id>")
class EndpointById(MethodView):
    @requires("admin")
    @blp.arguments(EndpointUpdate)
    @blp.response(200, EndpointOut)
    def put(self, body, endpoint_id):
        with services().command() as uow:
            return webhooks.update(uow.session, services().settings, workspace_id(), endpoint_id, body, operator())

    @requires("admin")
    @blp.response(204)
    def delete(self, endpoint_id):
        with services().command() as uow:
            webhooks.delete(uow.session, workspace_id(), endpoint_id, operator())


@blp.route("/push/key")
class PushKey(MethodView):
    @blp.response(200, PushKeyOut)
    def get(self):
        return {"public_key": push.public_key(services().db, services().settings)}


@blp.route("/push/subscriptions")
class PushSubscriptions(MethodView):
    @blp.response(200, PushSubscriptionList)
    def get(self):
        with services().db.read() as session:
            return {"items": push.list_subscriptions(session, user_id())}

    @blp.arguments(PushSubscriptionIn)
    @blp.response(201, PushSubscriptionOut)
    def post(self, body):
        with services().command() as uow:
            return push.subscribe(
                uow.session, services().settings, workspace_id(), user_id(), body, request.headers.get("User-Agent", "")
            )

    @blp.arguments(PushEndpointIn)
    @blp.response(204)
    def delete(self, body):
        with services().command() as uow:
            push.unsubscribe(uow.session, user_id(), body["endpoint"])
