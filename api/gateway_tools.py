"""/api/gateway/tools: learning per MCP gateway tool (docs/mcp-gateway.md "Learning per tool"): each tool's evidence,
mode and spot checks, per agent identity too, and a lead's promotion (services/gateway/learning.py)."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, require, requires, services, workspace_id
from api.metrics import SnapshotSchema
from api.schemas import StrictBoolean, ValueChange, map_of
from core import gateway_learning as L
from core.coaching.levels import LEVELS
from core.errors import NotFound
from services.gateway import builtins, learning, packs
from services.metrics import service as metrics

blp = Blueprint(
    "gateway_tools",
    __name__,
    url_prefix="/api/gateway",
    description="Learning per MCP gateway tool: evidence, AUTO with spot checks, demotion",
)
metrics_blp = Blueprint(
    "tool_metrics",
    __name__,
    url_prefix="/api/metrics",
    description="Decisions per tool: the MCP gateway's tools, and plans' tools",
)

MODE_HELP = (
    "auto: held calls are forwarded unattended but for spot checks; always_review: every held call is "
    "reviewed; coaching: held calls are reviewed (for one agent: it follows the tool)"
)


class GatewayAgentToolSchema(SnapshotSchema):
    mode = fields.String(
        validate=validate.OneOf(L.MODES), metadata={"description": "this identity's own mode"}, required=True
    )
    effective_mode = fields.String(
        validate=validate.OneOf(L.MODES),
        metadata={"description": "the mode its calls of the tool are gated by"},
        required=True,
    )
    mode_of = fields.String(
        allow_none=True,
        validate=validate.OneOf((L.UNIT_TOOL, L.UNIT_AGENT)),
        metadata={"description": "whose mode that is: the tool's, the identity's own, or null (nobody chose one)"},
        required=True,
    )
    spot_check_rate = fields.Float(allow_none=True, required=True)
    spot_checks = fields.Nested(SnapshotSchema, allow_none=True, required=True)
    at_agent = fields.Nested(
        SnapshotSchema,
        allow_none=True,
        metadata={
            "description": "of its decisions, the answers of the person at the agent to a confirm rule's question "
            "(they count in the numbers above like a reviewer's; null: none)"
        },
        required=True,
    )


class PackChangeSchema(ValueChange):
    field = fields.String(metadata={"description": "a dotted path into the arguments"}, required=True)
    count = fields.Integer(required=True)


class PackRuleSchema(PackChangeSchema):
    share = fields.Float(metadata={"description": "its share of the edits that changed this field"}, required=True)


class GatewayPackSchema(Schema):
    pack_id = fields.String(required=True)
    tool = fields.String(required=True)
    enabled = StrictBoolean(
        metadata={
            "description": "a lead accepted its learned rules: they are suggested to reviewers and applied in AUTO"
        },
        required=True,
    )
    corrections = fields.Integer(metadata={"description": "the reviewers' edits counted"}, required=True)
    changes = fields.List(fields.Nested(PackChangeSchema), required=True)
    rules = fields.List(
        fields.Nested(PackRuleSchema),
        metadata={
            "description": "learned rules: a change made at least 3 times and in at least 80% of its field's edits"
        },
        required=True,
    )


class PackArgs(Schema):
    enabled = StrictBoolean(required=True)


class GatewayToolSchema(SnapshotSchema):
    tool = fields.String(
        metadata={"description": "<server>.<tool>, or coach.<tool> for an exposed built-in"}, required=True
    )
    source = fields.String(
        validate=validate.OneOf(("gateway", "plan")),
        metadata={"description": "gateway: an outside agent's calls through /mcp; plan: decisions of plans' steps"},
        required=True,
    )
    listed = StrictBoolean(
        metadata={"description": "the workspace's servers list this tool now (or it is a built-in exposed to agents)"},
        required=True,
    )
    mode = fields.String(validate=validate.OneOf(L.MODES), metadata={"description": MODE_HELP}, required=True)
    spot_check_rate = fields.Float(
        allow_none=True,
        metadata={"description": "the tool's own spot-check rate; null: the server's COACH_SPOT_CHECK_RATE"},
        required=True,
    )
    spot_checks = fields.Nested(
        SnapshotSchema,
        allow_none=True,
        metadata={"description": "the reviews of its calls while in AUTO: the demotion test's evidence"},
        required=True,
    )
    pack = fields.Nested(
        GatewayPackSchema,
        allow_none=True,
        metadata={
            "description": "the reviewers' edits of its arguments and the rules learned from them (null: none yet)"
        },
        required=True,
    )
    agents = map_of(
        fields.Nested(GatewayAgentToolSchema),
        metadata={"description": "per agent identity (by name): its calls of this tool"},
        required=True,
    )


class GatewayToolList(Schema):
    items = fields.List(fields.Nested(GatewayToolSchema), required=True)
    identities = map_of(
        fields.Nested(SnapshotSchema),
        metadata={"description": "per agent identity: its decisions across its tools"},
        required=True,
    )
    spot_check_rate = fields.Float(metadata={"description": "the server's COACH_SPOT_CHECK_RATE"}, required=True)


class ToolList(Schema):
    items = fields.List(fields.Nested(GatewayToolSchema), required=True)


class ToolModeArgs(Schema):
    mode = fields.String(required=True, validate=validate.OneOf(L.MODES), metadata={"description": MODE_HELP})
    agent = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=100),
        metadata={"description": "an agent identity's name: the tool for that identity only (its own evidence)"},
    )
    force = StrictBoolean(load_default=False, metadata={"description": "promote although not AUTO-ready (admin)"})
    reason = fields.String(
        load_default=None,
        validate=validate.Length(max=1000),
        metadata={
            "description": "why a forced promotion overrules the evidence: required with force, kept in the audit log"
        },
    )
    spot_check_rate = fields.Float(
        load_default=None,
        validate=validate.Range(min=0, max=1),
        metadata={
            "description": "the share of its AUTO calls held for a spot check (0..1); left out: the one set before, or "
            "COACH_SPOT_CHECK_RATE"
        },
    )


class ToolModeResult(Schema):
    tool = fields.String()
    agent = fields.String(allow_none=True)
    mode = fields.String(validate=validate.OneOf(L.MODES))
    previous_mode = fields.String(validate=validate.OneOf(L.MODES))
    level = fields.String(validate=validate.OneOf(LEVELS))
    auto_ready = StrictBoolean()
    spot_check_rate = fields.Float(allow_none=True)


def tool_views(session) -> list[dict]:
    """The gateway tools of the caller's workspace (GET /api/gateway/tools and GET /api/metrics/tools)."""
    listed = builtins.gateway_tools(services(), workspace_id(), session)
    return learning.views(session, workspace_id(), listed)


@blp.route("/tools")
class GatewayTools(MethodView):
    @requires("lead")
    @blp.response(200, GatewayToolList)
    def get(self):
        """Each gateway tool's evidence, mode and spot checks, per agent identity too"""
        with services().db.read() as session:
            return {
                "items": tool_views(session),
                "identities": learning.identities(session, workspace_id()),
                "spot_check_rate": services().settings.spot_check_rate,
            }


@blp.route("/tools/<tool>/mode")
class GatewayToolMode(MethodView):
    @requires("lead")
    @blp.arguments(ToolModeArgs)
    @blp.response(200, ToolModeResult)
    def post(self, args, tool):
        """Promote a tool (or a tool for one agent) to AUTO when AUTO-ready (409 otherwise), set it back to coaching,
        or pin it to always_review"""
        if args["force"]:
            require("admin")  # promoting a tool that is not AUTO-ready
        svc = services()
        with svc.command() as uow:
            if tool not in builtins.gateway_tools(svc, workspace_id(), uow.session) and not learning.known(
                uow.session, workspace_id(), tool
            ):
                raise NotFound(f"this workspace's agents have no tool {tool!r}", details={"tool": [tool]})
            if args["agent"] is not None:
                learning.check_agent(uow.session, workspace_id(), args["agent"])
            result = learning.set_mode(
                uow,
                workspace_id(),
                tool,
                args["mode"],
                agent=args["agent"],
                force=args["force"],
                reason=args["reason"],
                spot_check_rate=args["spot_check_rate"],
                actor=operator(),
            )
        return result


@blp.route("/tools/<tool>/pack")
class GatewayToolPack(MethodView):
    @requires("lead")
    @blp.arguments(PackArgs)
    @blp.response(200, GatewayPackSchema)
    def patch(self, args, tool):
        """Accept the tool's learned rules (enabled: suggested to reviewers, applied in AUTO) or stop them"""
        with services().command() as uow:
            return packs.set_enabled(uow.session, workspace_id(), tool, args["enabled"], operator())


@metrics_blp.route("/tools")
class ToolMetrics(MethodView):
    @requires("lead")
    @metrics_blp.response(200, ToolList)
    def get(self):
        """Decisions per tool: the MCP gateway's tools (`source: gateway`, with mode, spot checks and `agents`), then
        the tools of plans' steps (`source: plan`: a plan has no workflow to learn about)"""
        with services().db.read() as session:
            plans = metrics.load_many(session, workspace_id(), "tool")
            return {
                "items": tool_views(session)
                + [{"tool": name, "source": "plan", **state.snapshot()} for name, state in sorted(plans.items())]
            }
