"""Counterfactual replays and proposed regions (docs/autonomy.md "Proposals and replay"): what a condition, or a
policy rule being written, would have done to a scope's latest decided calls, and the regions Coach proposes from
the decisions. Leads only; read-only (nothing is stored, nothing counts as evidence). The rules are core/regions."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import requires, services, workspace_id
from api.policies import PolicyIn
from api.schemas import Shape, StrictBoolean, map_of, one_of
from core.policy import EFFECTS
from core.regions import proposals as P
from core.regions import replay as R
from services.replay import service as replay

blp = Blueprint(
    "replay",
    __name__,
    url_prefix="/api",
    description="Counterfactual replay of conditions and policy rules; proposed regions",
)

LIMIT: dict[str, Any] = {
    "load_default": R.DEFAULT_LIMIT,
    "strict": True,
    "validate": validate.Range(min=1, max=R.MAX_CALLS),
    "metadata": {"description": f"the latest decided calls replayed (1-{R.MAX_CALLS}, default {R.DEFAULT_LIMIT})"},
}
WHEN = (
    "a condition in the policy predicate language (docs/policies.md Predicates) over `params`, `tool`, "
    "`agent` ..., e.g. `params.amount <= 200`"
)


class ReplayIn(Schema):
    when = fields.String(required=True, metadata={"description": WHEN})
    limit = fields.Integer(**LIMIT)


class ToolReplayIn(ReplayIn):
    identity = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=100),
        metadata={"description": "only this agent identity's calls (its name)"},
    )


class PolicyReplayIn(Schema):
    rule = fields.Nested(PolicyIn, required=True, metadata={"description": "a rule as POST /api/policies takes it"})
    workflow_id = fields.String(load_default=None, allow_none=True)
    step_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=200))
    tool = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "a gateway tool: its reviewed calls"},
    )
    limit = fields.Integer(**LIMIT)


class TallySchema(Shape):
    calls = fields.Integer(required=True)
    accepted = fields.Integer(required=True)
    corrected = fields.Integer(required=True)
    rejected = fields.Integer(required=True)
    manual = fields.Integer(required=True)
    skipped = fields.Integer(required=True)


class ReplayLinkSchema(Shape):
    """A corrected or rejected call that would have run unattended."""

    decision = one_of(("correct", "reject"), required=True)
    created_at = fields.String()
    path = fields.String(
        allow_none=True,
        metadata={"description": "the web app's page of the call (`/executions/<id>`; null for a gateway call)"},
    )
    suggestion_id = fields.String()
    execution_id = fields.String()
    decision_id = fields.String()
    step_id = fields.String()
    approval_id = fields.String(metadata={"description": "a gateway call's review"})
    call_id = fields.String(allow_none=True, metadata={"description": "the held gateway call"})
    agent = fields.String(allow_none=True)


class FailedSchema(Shape):
    calls = fields.Integer(required=True)
    first_error = fields.String(allow_none=True)


class ReplaySchema(Shape):
    calls = fields.Integer(required=True, metadata={"description": "the past decided calls replayed, newest first"})
    limit = fields.Integer(required=True)
    unattended = fields.Nested(
        TallySchema,
        required=True,
        metadata={"description": "would have run without a person; the reviewers' actual decisions on them"},
    )
    denied = fields.Nested(TallySchema, required=True)
    asked = fields.Nested(TallySchema, required=True, metadata={"description": "would still have been asked"})
    links = fields.List(
        fields.Nested(ReplayLinkSchema),
        required=True,
        metadata={"description": f"the unattended calls reviewers corrected or rejected (at most {R.MAX_LINKS})"},
    )
    links_left_off = fields.Integer(required=True)
    evidence = StrictBoolean(
        required=True, metadata={"description": "always false: a replay is never promotion evidence"}
    )
    in_region = fields.Integer(metadata={"description": "a condition's replay: the calls it holds for"})
    condition_failed = fields.Nested(
        FailedSchema, metadata={"description": "calls the condition failed on (it does not hold there: fail closed)"}
    )
    matched = fields.Integer(metadata={"description": "a rule's replay: the calls the rule decides"})
    changed = fields.Integer(metadata={"description": "a rule's replay: the calls whose effect it changes"})
    effects = map_of(fields.Integer(), keys=one_of(EFFECTS))
    rule_failed = fields.Nested(
        FailedSchema, metadata={"description": "calls the rule failed on (taken as require_review: fail closed)"}
    )


class ProposalSchema(Shape):
    when = fields.String(required=True, metadata={"description": "the condition, a valid predicate"})
    explanation = fields.String(required=True)
    params = fields.List(fields.String(), required=True)
    decisions = fields.Integer(required=True)
    accepted = fields.Integer(required=True)
    coverage = fields.Float(required=True, metadata={"description": "the share of the decisions it holds for"})
    acceptance = fields.Float(required=True)
    lower_bound = fields.Float(required=True, metadata={"description": "Wilson 95% lower bound of acceptance"})
    upper_bound = fields.Float(required=True)
    suggested_mode = one_of(("auto", "always_review"), required=True)
    replay = fields.Nested(ReplaySchema, required=True)


class ProposalList(Schema):
    items = fields.List(fields.Nested(ProposalSchema), required=True)
    min_decisions = fields.Integer(metadata={"description": "counted decisions needed before anything is proposed"})


class ProposalArgs(Schema):
    identity = fields.String(load_default=None, validate=validate.Length(min=1, max=100))


def _tools():
    return services().tools.for_workspace(workspace_id())


@blp.route("/workflows/<workflow_id>/steps/<step_id>/replay")
class StepReplay(MethodView):
    @requires("lead")
    @blp.arguments(ReplayIn)
    @blp.response(200, ReplaySchema)
    def post(self, data, workflow_id, step_id):
        """What a region with this condition, in AUTO, would have done to the step's latest decided calls"""
        with services().db.read() as session:
            return replay.replay_step(
                session, workspace_id(), workflow_id, step_id, data["when"], limit=data["limit"], tools=_tools()
            )


@blp.route("/gateway/tools/<tool>/replay")
class ToolReplay(MethodView):
    @requires("lead")
    @blp.arguments(ToolReplayIn)
    @blp.response(200, ReplaySchema)
    def post(self, data, tool):
        """What a region with this condition, in AUTO, would have done to the gateway tool's latest reviewed calls"""
        svc = services()
        with svc.db.read() as session:
            replay.check_tool(svc, session, workspace_id(), tool)
            return replay.replay_tool(
                session,
                workspace_id(),
                tool,
                data["when"],
                identity=data["identity"],
                limit=data["limit"],
                tools=replay.gateway_registry(svc, session, workspace_id()),
            )


@blp.route("/policies/replay")
class PolicyReplay(MethodView):
    @requires("lead")
    @blp.arguments(PolicyReplayIn)
    @blp.response(200, ReplaySchema)
    def post(self, data):
        """What the workspace's rules with this rule added would have done to a scope's latest decided calls"""
        svc = services()
        with svc.db.read() as session:
            if data["tool"] is not None:
                replay.check_tool(svc, session, workspace_id(), data["tool"])
                tools = replay.gateway_registry(svc, session, workspace_id())
            else:
                tools = _tools()
            return replay.replay_policy(
                session,
                workspace_id(),
                data["rule"],
                workflow_id=data["workflow_id"],
                step_id=data["step_id"],
                tool=data["tool"],
                limit=data["limit"],
                tools=tools,
            )


@blp.route("/workflows/<workflow_id>/steps/<step_id>/proposals")
class StepProposals(MethodView):
    @requires("lead")
    @blp.response(200, ProposalList)
    def get(self, workflow_id, step_id):
        """Regions Coach proposes for the step from its decisions, each with its replay"""
        with services().db.read() as session:
            items = replay.proposals_for_step(session, workspace_id(), workflow_id, step_id, tools=_tools())
            return {"items": items, "min_decisions": P.MIN_DECISIONS}


@blp.route("/gateway/tools/<tool>/proposals")
class ToolProposals(MethodView):
    @requires("lead")
    @blp.arguments(ProposalArgs, location="query")
    @blp.response(200, ProposalList)
    def get(self, args, tool):
        """Regions Coach proposes for the gateway tool from its reviews, each with its replay"""
        svc = services()
        with svc.db.read() as session:
            replay.check_tool(svc, session, workspace_id(), tool)
            items = replay.proposals_for_tool(
                session,
                workspace_id(),
                tool,
                identity=args["identity"],
                tools=replay.gateway_registry(svc, session, workspace_id()),
            )
            return {"items": items, "min_decisions": P.MIN_DECISIONS}
