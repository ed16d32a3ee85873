"""/api/policies: the workspace's policy rules, its default per tool risk, and a dry run with the explanation.

Operators read rules and the default (they see why a call waits for review); leads create, change, delete,
set the default and dry-run (POST /evaluate). Every change is audited. The rules' meaning is core/policy's.
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import INCLUDE, Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import Checked, OneOrMany, Shape, StrictBoolean, ToolParams, ValueChange, always_sent
from core.policy import DEFAULT_EFFECTS, EFFECTS, FALLBACKS
from core.tools import RISKS
from core.workflow.model import STEP_TYPES
from services.policies import service as policies

blp = Blueprint(
    "policies",
    __name__,
    url_prefix="/api/policies",
    description="Policy rules: which tool calls run, wait for a person, or are refused, and why",
)

ONE_OR_MANY = "a string or a list of strings"


class ScopeSchema(Schema):
    class Meta:
        unknown = INCLUDE  # checked by core.policy, which names the field (`scope.<key>`)

    workflow_id = Checked("string", allow_none=True, metadata={"description": "only this workflow"})
    user = Checked("string", allow_none=True, metadata={"description": "only executions this user (email) started"})


class MatchSchema(Schema):
    """Every key is optional; all those given must hold. Checked by core.policy (422 names `match.<key>`)."""

    class Meta:
        unknown = INCLUDE

    tool = OneOrMany(allow_none=True, metadata={"description": f"tool name glob (`sql.*`), {ONE_OR_MANY}"})
    step_type = OneOrMany(allow_none=True, metadata={"description": f"{', '.join(STEP_TYPES)}: {ONE_OR_MANY}"})
    risk = OneOrMany(allow_none=True, metadata={"description": f"of {', '.join(RISKS)}: {ONE_OR_MANY}"})
    workflow_id = OneOrMany(allow_none=True, metadata={"description": ONE_OR_MANY})
    user = OneOrMany(allow_none=True, metadata={"description": f"who started the execution, {ONE_OR_MANY}"})
    agent_step = OneOrMany(
        allow_none=True, metadata={"description": f"the agent step calling, {ONE_OR_MANY}; `*`: any agent step"}
    )
    agent = OneOrMany(
        allow_none=True,
        metadata={
            "description": f"the agent identity calling through the MCP gateway "
            f"(its name), {ONE_OR_MANY}; `*`: any agent"
        },
    )
    sql = Checked(
        "string",
        allow_none=True,
        metadata={"description": "`not_read`: the call's `query` is not a read-only statement; `read`: it is"},
    )
    host_not_in = OneOrMany(
        allow_none=True,
        metadata={"description": "the call's `url` host is on none of these (host names, `*.suffix`, `*`)"},
    )
    path_outside = Checked(
        "string", allow_none=True, metadata={"description": "the call's `path` lies outside this folder"}
    )
    params = Checked(
        "string",
        allow_none=True,
        metadata={
            "description": "a predicate in the condition language (README, Policies), e.g. `params.amount > 1000`"
        },
    )


class PolicyIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    order = fields.Integer(load_default=0, strict=True)
    effect = fields.String(
        required=True,
        validate=validate.OneOf(EFFECTS),
        metadata={
            "description": "allow | require_review | deny | confirm (an MCP gateway call: ask the person at the agent, "
            "docs/mcp-gateway.md#confirm-ask-the-person-at-the-agent)"
        },
    )
    fallback = fields.Raw(
        load_default=None,
        allow_none=True,
        metadata={
            "type": "string",
            "enum": list(FALLBACKS),
            "description": "a confirm rule's: what applies when the agent's client cannot ask its user "
            "(require_review by default, or deny); only a confirm rule has one (422 otherwise)",
        },
    )
    reason = fields.String(load_default="", validate=validate.Length(max=2000))
    enabled = StrictBoolean(load_default=True)
    scope = fields.Nested(ScopeSchema, load_default=dict)
    match = fields.Nested(MatchSchema, load_default=dict)


@always_sent("order", "reason", "enabled", "scope", "match")
class PolicyOut(PolicyIn):
    id = fields.String(required=True)
    revision = fields.Integer(
        required=True, metadata={"description": "the workspace's policy revision this rule was written at"}
    )
    created_by = fields.String()
    created_at = fields.DateTime()
    updated_at = fields.DateTime()


class PolicyList(Schema):
    items = fields.List(fields.Nested(PolicyOut), required=True, metadata={"description": "in precedence order"})
    revision = fields.Integer(required=True)


class DefaultsSchema(Schema):
    class Meta:
        unknown = INCLUDE  # an unknown risk is a 422 naming it (core.policy.check_defaults)

    read = fields.String(validate=validate.OneOf(DEFAULT_EFFECTS))
    write = fields.String(validate=validate.OneOf(DEFAULT_EFFECTS))
    external = fields.String(validate=validate.OneOf(DEFAULT_EFFECTS))
    destructive = fields.String(validate=validate.OneOf(DEFAULT_EFFECTS))


@always_sent(*RISKS)
class DefaultsOut(DefaultsSchema):
    """The workspace's default for every risk (the built-in one where it set none)."""


class EvaluateIn(Schema):
    tool = fields.String(required=True, validate=validate.Length(min=1, max=200))
    params = ToolParams(load_default=dict)
    step_type = fields.String(load_default="action", validate=validate.OneOf(STEP_TYPES))
    workflow_id = fields.String(load_default=None, allow_none=True)
    user = fields.String(load_default=None, allow_none=True)
    agent_step = fields.String(load_default=None, allow_none=True)
    agent = fields.String(
        load_default=None,
        allow_none=True,
        metadata={"description": "the gateway's agent identity (its name) making the call"},
    )


class RuleRef(Shape):
    id = fields.String(allow_none=True, required=True, metadata={"description": "null: the workspace default"})
    name = fields.String(required=True)
    scope = fields.String(required=True, validate=validate.OneOf(("workspace", "workflow", "user", "user+workflow")))
    order = fields.Integer()
    reason = fields.String()
    error = fields.String(metadata={"description": "the rule failed and was taken as require_review (fail closed)"})
    fallback = fields.String(validate=validate.OneOf(FALLBACKS), metadata={"description": "a confirm rule's fallback"})
    note = fields.String(
        metadata={"description": "a confirm rule on a call with no agent to ask (a workflow's): its fallback applied"}
    )


class MatchedRule(RuleRef):
    effect = fields.String(required=True, validate=validate.OneOf(EFFECTS))
    lost_because = fields.String(required=True)


class AppliedRuleSchema(Shape, ValueChange):
    """A learned rule that changed a call's arguments: the value it replaces (before) and the one it puts instead."""

    field = fields.String(required=True)
    count = fields.Integer()


class LearnedSuggestionSchema(Shape):
    """What a gateway tool's accepted learned rules make of a held call's arguments (docs/mcp-gateway.md)."""

    pack_id = fields.String(required=True)
    params = ToolParams(required=True, metadata={"description": "the corrected arguments"})
    rules = fields.List(fields.Nested(AppliedRuleSchema), required=True)
    text = fields.String(required=True, metadata={"description": "the changes in words: reason: 'late' → 'lost'"})
    auto = StrictBoolean(metadata={"description": "applied without a person when the tool is in AUTO"})


class HeldRegionSchema(Shape):
    id = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "its condition version when the call was held"})
    name = fields.String(required=True)
    mode = fields.String(required=True, validate=validate.OneOf(("coaching", "auto", "always_review")))


class VerdictSchema(Shape):
    effect = fields.String(required=True, validate=validate.OneOf(EFFECTS))
    default = StrictBoolean(
        required=True, metadata={"description": "no rule matched: the workspace default for the tool's risk"}
    )
    fallback = fields.String(
        validate=validate.OneOf(FALLBACKS),
        metadata={"description": "confirm: what applies when the agent's client cannot ask its user"},
    )
    rule = fields.Nested(RuleRef, required=True)
    matched = fields.List(
        fields.Nested(MatchedRule), required=True, metadata={"description": "rules that matched but lost"}
    )
    risk = fields.String(allow_none=True, validate=validate.OneOf(RISKS))
    revision = fields.Integer()
    learned = fields.Nested(
        LearnedSuggestionSchema,
        allow_none=True,
        metadata={"description": "gateway: the corrected arguments the tool's accepted learned rules suggest"},
    )
    region = fields.Nested(
        lambda: HeldRegionSchema(),
        allow_none=True,
        metadata={
            "description": "gateway: the tool's region the held call fell in (its decision counts there; "
            "docs/autonomy.md#regions)"
        },
    )


@blp.route("")
class Policies(MethodView):
    @blp.response(200, PolicyList)
    def get(self):
        with services().db.read() as session:
            ws = workspace_id()
            return {
                "items": [policies.view(r) for r in policies.list_rules(session, ws)],
                "revision": policies.revision(session, ws),
            }

    @requires("lead")
    @blp.arguments(PolicyIn)
    @blp.response(201, PolicyOut)
    def post(self, data):
        with services().command() as uow:
            return policies.view(policies.create(uow.session, workspace_id(), data, operator()))


@blp.route("/default")
class PolicyDefault(MethodView):
    @blp.response(200, DefaultsOut)
    def get(self):
        with services().db.read() as session:
            return policies.get_defaults(session, workspace_id())

    @requires("lead")
    @blp.arguments(DefaultsSchema)
    @blp.response(200, DefaultsOut)
    def put(self, data):
        with services().command() as uow:
            return policies.set_defaults(uow.session, workspace_id(), data, operator())


@blp.route("/evaluate")
class PolicyEvaluate(MethodView):
    @requires("lead")
    @blp.arguments(EvaluateIn)
    @blp.response(200, VerdictSchema)
    def post(self, data):
        svc = services()
        call = policies.call_for(svc.tools.for_workspace(workspace_id()), data.pop("tool"), data.pop("params"), **data)
        with svc.db.read() as session:
            return policies.evaluate(session, workspace_id(), call).to_dict()


@blp.route("/<id:policy_id>")
class PolicyById(MethodView):
    @blp.response(200, PolicyOut)
    def get(self, policy_id):
        with services().db.read() as session:
            return policies.view(policies.get(session, workspace_id(), policy_id))

    @requires("lead")
    @blp.arguments(PolicyIn)
    @blp.response(200, PolicyOut)
    def put(self, data, policy_id):
        with services().command() as uow:
            return policies.view(policies.replace(uow.session, workspace_id(), policy_id, data, operator()))

    @requires("lead")
    @blp.response(204)
    def delete(self, policy_id):
        with services().command() as uow:
            policies.delete(uow.session, workspace_id(), policy_id, operator())
