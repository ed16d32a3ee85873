"""/api/metrics: learning metrics for leads' dashboards. Every read is a few rows, never a scan of decisions."""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import require, services, workspace_id
from api.schemas import StrictBoolean
from services.metrics import service as metrics, step_decisions
from services.workflows import service as workflows

blp = Blueprint("metrics", __name__, url_prefix="/api/metrics", description="Learning metrics")


class LatencySchema(Schema):
    p50 = fields.Integer(allow_none=True)
    p90 = fields.Integer(allow_none=True)


class SnapshotSchema(Schema):
    decisions = fields.Integer()
    suggestions = fields.Integer()
    accepted = fields.Integer()
    rejected = fields.Integer()
    corrected = fields.Integer()
    manual = fields.Integer()
    skipped = fields.Integer()
    acceptance_rate = fields.Float()
    rolling_acceptance_rate = fields.Float()
    confidence = fields.Float()
    decision_latency_ms = fields.Nested(LatencySchema)
    level = fields.String()
    auto_ready = StrictBoolean()
    window_size = fields.Integer()
    window_decisions = fields.Integer()
    to_auto = fields.Dict(metadata={"description": "how far from AUTO-ready"})
    evidence = fields.Dict(metadata={"description": "the AUTO readiness test: statistic (log e-value), threshold "
                                                    "(1/auto_alpha), decisions_needed_if_all_accepted, test"})
    decisions_needed = fields.Integer(allow_none=True, metadata={
        "description": "decisions, all accepted, before AUTO-ready by every bar (0: ready; null: none would now)"})


class StepMetricsSchema(SnapshotSchema):
    mode = fields.String(metadata={"description": "coaching (follows the workflow), auto or always_review"})
    spot_checks = fields.Nested(SnapshotSchema)


class WorkflowMetricsSchema(SnapshotSchema):
    workflow_id = fields.String()
    name = fields.String()
    mode = fields.String()
    steps = fields.Dict(keys=fields.String(), values=fields.Nested(StepMetricsSchema))
    current_version = fields.Dict()
    spot_checks = fields.Nested(SnapshotSchema)
    series = fields.List(fields.Dict())


class WorkflowMetricsList(Schema):
    items = fields.List(fields.Nested(WorkflowMetricsSchema))


class OperatorMetricsSchema(SnapshotSchema):
    operator = fields.String()
    series = fields.List(fields.Dict())


class OperatorList(Schema):
    items = fields.List(fields.Nested(OperatorMetricsSchema))


class GlobalSchema(SnapshotSchema):
    workflows = fields.Integer()
    levels = fields.Dict(metadata={"description": "number of workflows at each level"})
    auto_ready_workflows = fields.Integer()
    series = fields.List(fields.Dict())


def _workflow_summaries(session) -> list[dict]:
    rows, _ = workflows.list_page(session, workspace_id(), 1, 10_000)
    scopes = metrics.workspace_step_scopes(session, workspace_id())
    return [metrics.workflow_view(session, wf, scopes=scopes) for wf in rows]


@blp.route("/global")
class GlobalMetrics(MethodView):
    @blp.response(200, GlobalSchema)
    def get(self):
        require("lead")
        with services().db.read() as session:
            body = metrics.load(session, workspace_id(), *metrics.GLOBAL).snapshot()
            summaries = _workflow_summaries(session)
            levels: dict[str, int] = {}
            for wf in summaries:
                levels[wf["level"]] = levels.get(wf["level"], 0) + 1
            body.update(workflows=len(summaries), levels=levels,
                        auto_ready_workflows=sum(1 for wf in summaries if wf["auto_ready"]),
                        series=metrics.series(session, workspace_id(), *metrics.GLOBAL))
            return body


@blp.route("/workflows")
class WorkflowMetricsIndex(MethodView):
    @blp.response(200, WorkflowMetricsList)
    def get(self):
        with services().db.read() as session:
            return {"items": _workflow_summaries(session)}


@blp.route("/workflows/<workflow_id>")
class WorkflowMetrics(MethodView):
    @blp.response(200, WorkflowMetricsSchema)
    def get(self, workflow_id):
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return metrics.workflow_view(session, wf, detail=True)


class StepDecisionsArgs(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))


class StepDecisionSchema(Schema):
    decision_id = fields.String()
    suggestion_id = fields.String()
    execution_id = fields.String()
    decision = fields.String(metadata={"description": "accept, correct, reject, manual or skip"})
    operator = fields.String()
    created_at = fields.DateTime()
    latency_ms = fields.Float()
    outcome = fields.String(allow_none=True, metadata={"description": "step_failed: the correction's step then "
                                                                      "failed because of it"})
    counted = StrictBoolean(metadata={"description": "whether the readiness test counts it (a skip is not counted)"})


class StepDecisionList(Schema):
    items = fields.List(fields.Nested(StepDecisionSchema))


@blp.route("/workflows/<workflow_id>/steps/<step_id>/decisions")
class StepDecisions(MethodView):
    @blp.arguments(StepDecisionsArgs, location="query")
    @blp.response(200, StepDecisionList)
    def get(self, args, workflow_id, step_id):
        """The decisions behind a step's readiness: its latest decisions, newest first (an index, no scan)."""
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return {"items": step_decisions.latest(session, wf, step_id, args["limit"])}


@blp.route("/operators")
class OperatorMetrics(MethodView):
    @blp.response(200, OperatorList)
    def get(self):
        require("lead")
        with services().db.read() as session:
            states = metrics.load_many(session, workspace_id(), "operator")
            items = [{"operator": name, **state.snapshot(),
                      "series": metrics.series(session, workspace_id(), "operator", name)}
                     for name, state in sorted(states.items())]
            return {"items": items}
