"""/api/executions/<id>/coaching/...: the suggestion, decisions, stats, pause and resume."""

from __future__ import annotations

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields, pre_load, validate

from api.base import Blueprint
from api.context import operator, require, services, workspace_id
from api.execution_schemas import ExecutionSchema, ExecutionUpdateSchema
from api.executions import StartArgs, start_execution
from api.policies import VerdictSchema
from api.schemas import Shape, StrictBoolean, ToolOutput, ToolParams, ToolSchema, one_of
from core import gates as G
from core.coaching.counters import DECISIONS
from core.execution import states as S
from core.tools import RISKS
from services.coaching import service as coaching
from services.decisions import coaching as decisions
from services.decisions import undo
from services.executions import service as executions

blp = Blueprint("coaching", __name__, url_prefix="/api/executions", description="Coaching sessions")


class CoachingStartArgs(StartArgs):
    mode = fields.String(load_default="coaching", validate=validate.Equal("coaching"))


# a suggestion's status: pending until decided, superseded (a correction or recovery replaced it), timed_out
# held: decided on a risky call and held for the undo window (docs/web-app.md "Undo"), pending again after an undo
SUGGESTION_STATUSES = ("pending", "held", "decided", "superseded", "timed_out")
PURPOSES = ("coaching", "spot_check", "correction", "check")


class SuggestionSchema(Shape):
    suggestion_id = fields.String(required=True)
    execution_id = fields.String(required=True)
    workflow_id = fields.String(required=True)
    workflow_version = fields.Integer()
    step_id = fields.String(required=True)
    step_name = fields.String()
    tool = fields.String(allow_none=True, required=True)
    params = ToolParams(allow_none=True, required=True, metadata={"description": "the tool's params"})
    definition_params = ToolParams(
        allow_none=True, metadata={"description": "the params as the definition writes them"}
    )
    params_schema = ToolSchema(allow_none=True, metadata={"description": "the JSON Schema of the tool's params"})
    risk = one_of(RISKS, allow_none=True)
    rationale = fields.String()
    confidence = fields.Float(required=True)
    source = fields.String(
        required=True,
        metadata={"description": "definition | correction_pack:<id> | llm (an agent's call as it wrote it)"},
    )
    status = one_of(SUGGESTION_STATUSES, required=True, metadata={"description": "timed_out: its deadline fired"})
    version = fields.Integer(required=True)
    purpose = one_of(
        PURPOSES,
        metadata={
            "description": "correction: after a reject; check: a check suggestion (one param set to a value reviewers "
            "corrected away; it never runs, docs/autonomy.md#check-suggestions)"
        },
    )
    policy = fields.Nested(
        VerdictSchema,
        allow_none=True,
        metadata={
            "description": "the policy's verdict on the suggested call, with its explanation (as POST "
            "/api/policies/evaluate answers); accepting or correcting a denied call is a 409"
        },
    )
    created_at = fields.DateTime(required=True)
    deadline = fields.DateTime(
        allow_none=True,
        metadata={
            "description": "when the step's on_human_timeout applies if nobody decides; null: no deadline, or paused"
        },
    )
    on_timeout = one_of(
        (G.SKIP, G.FAIL, G.ACCEPT),
        allow_none=True,
        metadata={"description": "what the deadline does: skip, fail, or accept (runs the suggested params)"},
    )
    kind = one_of(
        ("step", "tool_call"),
        required=True,
        metadata={
            "description": "step, or tool_call: a call an agent step's LLM asked for (params: its arguments, "
            "definition_params: the arguments as the LLM wrote them, rationale: what the LLM said)"
        },
    )
    tool_call_id = fields.String(
        allow_none=True, metadata={"description": "tool_call: the call's id, as the LLM named it"}
    )
    agent_message_id = fields.String(allow_none=True)
    region = fields.Nested(
        lambda: SuggestionRegionSchema(),
        allow_none=True,
        metadata={
            "description": "the region of its step (or tool) the call fell in when it was asked (docs/autonomy.md"
            "#regions); null: in none"
        },
    )


class SuggestionRegionSchema(Shape):
    id = fields.String(required=True)
    name = fields.String(required=True)
    mode = one_of(("coaching", "auto", "always_review"), required=True)
    current = StrictBoolean(
        required=True,
        metadata={"description": "false once the region's condition changed: this decision no longer counts for it"},
    )


class PendingSchema(Shape):
    execution_id = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    paused = StrictBoolean(required=True)
    suggestion = fields.Nested(SuggestionSchema, allow_none=True, required=True)
    suggestions = fields.List(fields.Nested(SuggestionSchema), required=True)


class DecisionArgs(Schema):
    suggestion_id = fields.String(required=True)
    decision = one_of(
        (*DECISIONS, "edit"),
        required=True,
        metadata={"description": "`edit` is taken as `correct` (docs/agent-steps.md: edit = correct)"},
    )
    correction = ToolParams(
        load_default=None,
        allow_none=True,
        metadata={"description": "correct: the new params (free-form; checked against the tool's JSON Schema)"},
    )
    feedback = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=5000))
    manual_output = ToolOutput(load_default=None, allow_none=True, metadata={"description": "manual: the output"})

    @pre_load
    def edit_is_correct(self, data, **kwargs):
        if isinstance(data, dict) and data.get("decision") == "edit":
            return {**data, "decision": "correct"}
        return data


class StatsSchema(Shape):
    suggestions_made = fields.Integer(required=True)
    accepted = fields.Integer(required=True)
    rejected = fields.Integer(required=True)
    corrected = fields.Integer(required=True)
    manual_executions = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    timed_out = fields.Integer(
        required=True, metadata={"description": "suggestions whose deadline fired: no operator decided them"}
    )


class DecisionRecordSchema(Shape):
    decision_id = fields.String(required=True)
    suggestion_id = fields.String(required=True)
    decision = one_of(DECISIONS, required=True)
    operator = fields.String(allow_none=True)
    latency_ms = fields.Float(allow_none=True)
    created_at = fields.String(metadata={"description": "ISO 8601"})
    held_until = fields.String(
        allow_none=True,
        metadata={
            "description": "a decision on a risky call: held until then (ISO 8601), when its step runs; until then "
            "POST .../coaching/undo takes it back. null: it acted at once"
        },
    )


class CheckResultSchema(Shape):
    result = one_of(
        ("miss", "catch"),
        allow_none=True,
        required=True,
        metadata={
            "description": "miss: the check was accepted; catch: rejected, corrected or done by hand; null: skipped"
        },
    )
    param = fields.String(required=True, metadata={"description": "the param the check changed"})
    shown = fields.Raw(allow_none=True, metadata={"description": "the value it showed: one reviewers corrected away"})
    real = fields.Raw(allow_none=True, metadata={"description": "the real suggestion's value"})
    message = fields.String(required=True)


class DecisionResultSchema(Shape):
    ok = StrictBoolean(required=True)
    decision = fields.Nested(DecisionRecordSchema, required=True)
    check = fields.Nested(
        CheckResultSchema,
        metadata={
            "description": "the suggestion decided was a check (docs/autonomy.md#check-suggestions): nothing ran, and "
            "the real suggestion is the execution's next"
        },
    )
    execution = fields.Nested(ExecutionUpdateSchema, required=True)
    stats = fields.Nested(StatsSchema, required=True)


class UndoArgs(Schema):
    suggestion_id = fields.String(required=True, validate=validate.Length(min=1, max=32))


class UndoResultSchema(Shape):
    ok = StrictBoolean(required=True)
    suggestion = fields.Nested(SuggestionSchema, required=True, metadata={"description": "pending again"})
    execution = fields.Nested(ExecutionUpdateSchema, required=True)


def pending_view(session, ex) -> dict:
    svc = services()
    items = [
        coaching.described(session, svc.definitions, svc.tools.for_workspace(workspace_id()), s)
        for s in coaching.pending(session, ex.id)
    ]
    return {
        "execution_id": ex.id,
        "status": ex.status,
        "paused": ex.status == "paused",
        "suggestion": items[0] if items else None,
        "suggestions": items,
    }


@blp.route("/coaching")
class StartCoaching(MethodView):
    @blp.arguments(CoachingStartArgs)
    @blp.response(201, ExecutionSchema)
    def post(self, args):
        return start_execution(args)


@blp.route("/<execution_id>/coaching/suggestion")
class PendingSuggestion(MethodView):
    @blp.response(200, PendingSchema)
    def get(self, execution_id):
        with services().db.read() as session:
            return pending_view(session, executions.get(session, workspace_id(), execution_id))


@blp.route("/<execution_id>/coaching/decision")
class DecisionResource(MethodView):
    @blp.arguments(DecisionArgs)
    @blp.response(200, DecisionResultSchema)
    def post(self, body, execution_id):
        require("operator")
        key = request.headers.get("Idempotency-Key") or None
        return decisions.submit(services(), workspace_id(), execution_id, body, operator(), key)


@blp.route("/<execution_id>/coaching/undo")
class UndoResource(MethodView):
    @blp.arguments(UndoArgs)
    @blp.response(200, UndoResultSchema)
    def post(self, body, execution_id):
        """Take back a decision held for its undo window: the suggestion is pending again (409 once its step
        started, or when the decision was not held)."""
        require("operator")
        return undo.submit(services(), workspace_id(), execution_id, body["suggestion_id"], operator())


@blp.route("/<execution_id>/coaching/stats")
class Stats(MethodView):
    @blp.response(200, StatsSchema)
    def get(self, execution_id):
        with services().db.read() as session:
            return executions.stats_of(executions.get(session, workspace_id(), execution_id))


@blp.route("/<execution_id>/coaching/pause")
class Pause(MethodView):
    @blp.response(200, PendingSchema)
    def post(self, execution_id):
        require("operator")
        with services().command() as uow:
            ex = coaching.pause(uow, workspace_id(), execution_id, operator())
            body = pending_view(uow.session, ex)
        return body


@blp.route("/<execution_id>/coaching/resume")
class Resume(MethodView):
    @blp.response(200, PendingSchema)
    def post(self, execution_id):
        require("operator")
        svc = services()
        with svc.command() as uow:
            ex, go_on = coaching.resume(
                uow,
                workspace_id(),
                execution_id,
                operator(),
                tools=svc.tools.for_workspace(workspace_id()),
                definitions=svc.definitions,
            )
            if go_on:
                uow.run_next(execution_id)
            body = pending_view(uow.session, ex)
        return body
