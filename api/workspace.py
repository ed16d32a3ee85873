"""/api/workspace/outbound: the hosts this workspace's outbound requests (http.request) may reach.

Leads read the lists; admins replace them (audited). The rules are core/outbound's.
"""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from services.policies import outbound

blp = Blueprint("workspace", __name__, url_prefix="/api/workspace",
                description="This workspace's own settings: the hosts its outbound requests may reach")

ENTRY = ("a host name (`api.example.com`), a `*.suffix` wildcard (`*.example.com`: names under it), `*` (any "
         "host), an IP address or a CIDR network (`10.0.0.0/8`)")


class OutboundSchema(Schema):
    allow = fields.List(fields.String(), load_default=list, metadata={
        "description": "when not empty, the only hosts reached (besides the server's COACH_OUTBOUND_ALLOW); "
                       "each entry is " + ENTRY})
    deny = fields.List(fields.String(), load_default=list, metadata={
        "description": "hosts never reached, whatever else allows them; each entry is " + ENTRY})
    server_allow = fields.List(fields.String(), dump_only=True, metadata={
        "description": "COACH_OUTBOUND_ALLOW: private, loopback … hosts the server's operator lets every "
                       "workspace reach (private ranges are refused otherwise; a workspace cannot open them)"})


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
        with services().db.transaction() as session:
            lists = outbound.set_lists(session, workspace_id(), args, operator())
        return _view(lists)
