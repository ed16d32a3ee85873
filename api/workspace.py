"""/api/workspace/outbound: the hosts this workspace's outbound requests (http.request) may reach. Leads read the
lists; admins replace them (audited). The rules are core/outbound's.

/api/workspace/undo: how long a decision on a risky call is held before its step runs, so that it can be taken
back (core/coaching/undo.py). Operators read it (the panel shows the countdown); admins set it (audited).

/api/workspace/reviews: the floor under which an accept counts as fast on the reviewers' figures
(core/coaching/attention.py, GET /api/metrics/workflows/<id>/reviewers), the rate of check suggestions and the bars
of evidence from attentive operators (core/coaching/checks.py). Every member reads them; leads set them (audited).

/api/workspace/gateway: the built-in tools this workspace's agents may call through the MCP gateway, as `coach.<tool>`
(services/gateway/builtins.py; default none). Leads read it; admins choose (audited).
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import StrictBoolean, StrictFloat, one_of
from core.coaching import attention, checks
from core.coaching.undo import MAX_WINDOW_S
from core.tools import RISKS
from services.coaching import held
from services.gateway import builtins
from services.metrics import review_settings
from services.policies import outbound

blp = Blueprint(
    "workspace",
    __name__,
    url_prefix="/api/workspace",
    description="This workspace's own settings: the hosts its outbound requests may reach, its undo window, "
    "its floor for attentive reviews, the built-in tools its agents may call",
)

ENTRY = (
    "a host name (`api.example.com`), a `*.suffix` wildcard (`*.example.com`: names under it), `*` (any "
    "host), an IP address or a CIDR network (`10.0.0.0/8`)"
)


class OutboundSchema(Schema):
    allow = fields.List(
        fields.String(),
        load_default=list,
        metadata={
            "description": "when not empty, the only hosts reached (besides the server's COACH_OUTBOUND_ALLOW); "
            "each entry is " + ENTRY
        },
    )
    deny = fields.List(
        fields.String(),
        load_default=list,
        metadata={"description": "hosts never reached, whatever else allows them; each entry is " + ENTRY},
    )
    server_allow = fields.List(
        fields.String(),
        dump_only=True,
        metadata={
            "description": "COACH_OUTBOUND_ALLOW: private, loopback … hosts the server's operator lets every "
            "workspace reach (private ranges are refused otherwise; a workspace cannot open them)"
        },
    )


def _view(lists) -> dict:
    return {**lists.as_dict(), "server_allow": list(services().settings.outbound_allow)}


@blp.route("/outbound")
class Outbound(MethodView):
    @requires("lead")
    @blp.response(200, OutboundSchema)
    def get(self):
        with services().db.read() as session:
            return _view(outbound.get_lists(session, workspace_id()))

    @requires("admin")
    @blp.arguments(OutboundSchema)
    @blp.response(200, OutboundSchema)
    def put(self, args):
        with services().command() as uow:
            lists = outbound.set_lists(uow.session, workspace_id(), args, operator())
        return _view(lists)


class UndoWindowSchema(Schema):
    window_s = fields.Float(
        required=True,
        allow_none=True,
        validate=validate.Range(min=0, max=MAX_WINDOW_S),
        metadata={
            "description": "seconds a decision on a risky call (external or destructive tool, or flagged by a policy) "
            "is held before its step runs; 0: never held. PUT null: back to the server's default"
        },
    )
    default_s = fields.Float(dump_only=True, metadata={"description": "the server's COACH_UNDO_WINDOW_S"})
    workspace = fields.Boolean(dump_only=True, metadata={"description": "whether this workspace set its own"})


@blp.route("/undo")
class UndoWindow(MethodView):
    @requires("operator")
    @blp.response(200, UndoWindowSchema)
    def get(self):
        with services().db.read() as session:
            return held.get_setting(session, workspace_id(), services().settings.undo_window_s)

    @requires("admin")
    @blp.arguments(UndoWindowSchema)
    @blp.response(200, UndoWindowSchema)
    def put(self, args):
        with services().command() as uow:
            return held.set_setting(
                uow.session, workspace_id(), args["window_s"], services().settings.undo_window_s, operator()
            )


class ReviewDefaultsSchema(Schema):
    """The defaults of the check and evidence settings (core.coaching.checks.DEFAULTS)."""

    check_rate = fields.Float(required=True)
    evidence_from = one_of(checks.EVIDENCE_FROM, required=True)
    min_checks = fields.Integer(required=True)
    min_catch_rate = fields.Float(required=True)
    max_fast_share = fields.Float(required=True)


class ReviewFloorSchema(Schema):
    attentive_floor_ms = fields.Integer(
        allow_none=True,
        strict=True,
        validate=validate.Range(min=attention.MIN_FLOOR_MS, max=attention.MAX_FLOOR_MS),
        metadata={
            "description": "milliseconds: an accept made faster than this (from when its suggestion was shown) counts "
            "as a fast accept on the reviewers' figures; PUT null: back to the default"
        },
    )
    check_rate = StrictFloat(
        allow_none=True,
        validate=validate.Range(min=0, max=checks.MAX_CHECK_RATE),
        metadata={
            "description": "the share of coaching suggestions shown as check suggestions (one param set to a value "
            "reviewers corrected away before; never run): 0 off (the default), at most 0.2; PUT null: "
            "back to the default"
        },
    )
    evidence_from = one_of(
        checks.EVIDENCE_FROM,
        allow_none=True,
        metadata={
            "description": "all (the default): every decision is readiness evidence; attentive: only decisions by "
            "operators who clear the bars below count in the readiness tests of workflows, steps and "
            "regions"
        },
    )
    min_checks = fields.Integer(
        allow_none=True,
        strict=True,
        validate=validate.Range(min=1, max=10_000),
        metadata={
            "description": "checks with an outcome an operator must have had before their catch rate counts (default 5)"
        },
    )
    min_catch_rate = StrictFloat(
        allow_none=True,
        validate=validate.Range(min=0, max=1),
        metadata={
            "description": "the catch rate (caught checks / checks) an attentive operator has at least (default 0.8)"
        },
    )
    max_fast_share = StrictFloat(
        allow_none=True,
        validate=validate.Range(min=0, max=1),
        metadata={
            "description": "the share of their accepts under the floor an attentive operator has at most (default 0.5)"
        },
    )
    default_ms = fields.Integer(dump_only=True, metadata={"description": "the default floor"})
    min_ms = fields.Integer(dump_only=True, metadata={"description": "the lowest floor a lead may set"})
    max_ms = fields.Integer(dump_only=True, metadata={"description": "the highest floor a lead may set"})
    max_check_rate = StrictFloat(dump_only=True, metadata={"description": "the highest check_rate a lead may set"})
    defaults = fields.Nested(
        "ReviewDefaultsSchema", dump_only=True, metadata={"description": "each check and evidence setting's default"}
    )
    workspace = fields.Boolean(dump_only=True, metadata={"description": "whether this workspace set its own floor"})


@blp.route("/reviews")
class ReviewFloor(MethodView):
    @requires("operator")
    @blp.response(200, ReviewFloorSchema)
    def get(self):
        with services().db.read() as session:
            return review_settings.get_floor(session, workspace_id())

    @requires("lead")
    @blp.arguments(ReviewFloorSchema)
    @blp.response(200, ReviewFloorSchema)
    def put(self, args):
        """Set any of the settings (those left out stay as they are; null: back to the default), audited
        `attentive_floor` (the floor) and `review_settings` (the others). A body with none of them is a 422."""
        with services().command() as uow:
            return review_settings.set_settings(uow.session, workspace_id(), args, operator())


class BuiltinToolSchema(Schema):
    name = fields.String(metadata={"description": "the built-in's name (what builtin_tools lists)"})
    gateway_name = fields.String(
        metadata={"description": "the name agents call it by, and policies match: coach.<name>"}
    )
    description = fields.String()
    risk = fields.String(validate=validate.OneOf(RISKS))
    exposed = StrictBoolean()


class GatewaySettingsSchema(Schema):
    builtin_tools = fields.List(
        fields.String(validate=validate.Length(min=1, max=128)),
        required=True,
        validate=validate.Length(max=100),
        metadata={
            "description": "the built-in tools this workspace's agents may call through /mcp (as coach.<name>); "
            "[]: none (the default)"
        },
    )
    available = fields.List(
        fields.Nested(BuiltinToolSchema),
        dump_only=True,
        metadata={"description": "every built-in tool of this server an admin may expose"},
    )


@blp.route("/gateway")
class GatewaySettings(MethodView):
    @requires("lead")
    @blp.response(200, GatewaySettingsSchema)
    def get(self):
        with services().db.read() as session:
            return builtins.view(session, services().tools, workspace_id())

    @requires("admin")
    @blp.arguments(GatewaySettingsSchema)
    @blp.response(200, GatewaySettingsSchema)
    def put(self, args):
        with services().command() as uow:
            return builtins.set_exposed(
                uow.session, services().tools, workspace_id(), args["builtin_tools"], operator()
            )
