"""/api/metrics: learning metrics for leads' dashboards. A scope that learns is read from its row; the workspace's and
the operators' totals and the charts are counted from the decisions, in a few aggregate statements
(services/metrics/totals.py, series.py)."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import require, requires, services, workspace_id
from api.schemas import Shape, StrictBoolean, map_of, one_of
from core.coaching import autonomy
from core.coaching.counters import DECISIONS
from core.coaching.levels import LEVELS
from core.coaching.soundness import FAILED_STEP
from services.metrics import reviewers, series, step_decisions, totals
from services.metrics import service as metrics
from services.workflows import service as workflows

blp = Blueprint("metrics", __name__, url_prefix="/api/metrics", description="Learning metrics")


class ToAutoSchema(Shape):
    decisions_to_coaching = fields.Integer(required=True)
    window_decisions_needed = fields.Integer(required=True)
    acceptance_gap = fields.Float(required=True)
    auto_min_window = fields.Integer(required=True)
    auto_acceptance = fields.Float(required=True)


class EvidenceSchema(Shape):
    """The AUTO readiness test as figures (docs/autonomy.md)."""

    statistic = fields.Float(required=True, metadata={"description": "the log of the e-value"})
    statistic_kind = fields.String(validate=validate.OneOf(("log_e_value",)))
    e_value = fields.Float()
    threshold = fields.Float(required=True, metadata={"description": "1 / auto_alpha, which the e-value must reach"})
    log_threshold = fields.Float()
    decisions_needed_if_all_accepted = fields.Integer(allow_none=True, required=True)
    test = fields.String(required=True)
    accepted_since_restart = fields.Integer()
    counted_since_restart = fields.Integer()
    attentive_since_restart = fields.Integer(
        metadata={
            "description": "of counted_since_restart, the decisions by attentive operators (docs/autonomy.md"
            "#check-suggestions)"
        }
    )
    drop_statistic = fields.Float()
    drop_alarm = StrictBoolean()


class SeriesPointSchema(Shape):
    """One hour of decisions, for charts."""

    bucket = fields.String(required=True, metadata={"format": "date-time"})
    decisions = fields.Integer(required=True)
    accepted = fields.Integer(required=True)
    rejected = fields.Integer(required=True)
    corrected = fields.Integer(required=True)
    manual = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    acceptance_rate = fields.Float(required=True)
    latency_ms_avg = fields.Float(allow_none=True, required=True)


class LatencySchema(Schema):
    p50 = fields.Integer(allow_none=True, required=True)
    p90 = fields.Integer(allow_none=True, required=True)


class TotalsSchema(Schema):
    """A set of decisions' counts and rates (the workspace's, an operator's; every scope's snapshot has them)."""

    decisions = fields.Integer(required=True)
    suggestions = fields.Integer(required=True)
    accepted = fields.Integer(required=True)
    rejected = fields.Integer(required=True)
    corrected = fields.Integer(required=True)
    manual = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    acceptance_rate = fields.Float(required=True)
    rolling_acceptance_rate = fields.Float(required=True)
    confidence = fields.Float(required=True)
    decision_latency_ms = fields.Nested(LatencySchema, required=True)
    window_size = fields.Integer(required=True)
    window_decisions = fields.Integer(required=True)


class SnapshotSchema(TotalsSchema):
    """A scope that learns (a workflow, its version, a step, a tool): its totals, its level and readiness test."""

    level = one_of(LEVELS, required=True)
    auto_ready = StrictBoolean(required=True)
    to_auto = fields.Nested(ToAutoSchema, metadata={"description": "how far from AUTO-ready"})
    evidence = fields.Nested(EvidenceSchema)
    evidence_decisions = fields.Integer(
        metadata={
            "description": "the decisions in the readiness test since it last restarted (skips and, where the "
            "workspace takes evidence from attentive operators only, the others' decisions are not)"
        }
    )
    attentive_decisions = fields.Integer(
        metadata={"description": "of evidence_decisions, those by operators who were attentive when they decided"}
    )
    decisions_needed = fields.Integer(
        allow_none=True,
        metadata={
            "description": "decisions, all accepted, before AUTO-ready by every bar (0: ready; null: none would now)"
        },
    )


class StepMetricsSchema(SnapshotSchema):
    mode = one_of(
        autonomy.STEP_MODES,
        required=True,
        metadata={"description": "coaching (follows the workflow), auto or always_review"},
    )
    spot_checks = fields.Nested(SnapshotSchema)


class VersionMetricsSchema(SnapshotSchema):
    version = fields.Integer(required=True)


class WorkflowMetricsSchema(SnapshotSchema):
    workflow_id = fields.String(required=True)
    name = fields.String(required=True)
    mode = one_of(autonomy.WORKFLOW_MODES, required=True)
    steps = map_of(fields.Nested(StepMetricsSchema))
    current_version = fields.Nested(VersionMetricsSchema, metadata={"description": "the detail only"})
    spot_checks = fields.Nested(SnapshotSchema)
    series = fields.List(fields.Nested(SeriesPointSchema))
    evidence_from = one_of(
        ("all", "attentive"),
        metadata={
            "description": "the detail only: the workspace's setting (GET /api/workspace/reviews); attentive: only "
            "attentive operators' decisions count in the readiness tests"
        },
    )


class WorkflowMetricsList(Schema):
    items = fields.List(fields.Nested(WorkflowMetricsSchema), required=True)


class OperatorMetricsSchema(TotalsSchema):
    operator = fields.String(required=True)
    series = fields.List(fields.Nested(SeriesPointSchema))


class OperatorList(Schema):
    items = fields.List(fields.Nested(OperatorMetricsSchema), required=True)


class GlobalSchema(TotalsSchema):
    workflows = fields.Integer(required=True)
    levels = map_of(
        fields.Integer(),
        required=True,
        keys=fields.String(validate=validate.OneOf(LEVELS)),
        metadata={"description": "number of workflows at each level"},
    )
    auto_ready_workflows = fields.Integer(required=True)
    series = fields.List(fields.Nested(SeriesPointSchema), required=True)


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
            body = totals.workspace(session, workspace_id())
            summaries = _workflow_summaries(session)
            levels: dict[str, int] = {}
            for wf in summaries:
                levels[wf["level"]] = levels.get(wf["level"], 0) + 1
            body.update(
                workflows=len(summaries),
                levels=levels,
                auto_ready_workflows=sum(1 for wf in summaries if wf["auto_ready"]),
                series=series.workspace_series(session, workspace_id()),
            )
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


class DecisionEffectSchema(Schema):
    e_value_before = fields.Float(metadata={"description": "the promotion test's e-value before this decision"})
    e_value_after = fields.Float(
        metadata={"description": "and after it (AUTO-ready needs the threshold, 1/auto_alpha)"}
    )
    accepts_needed_after = fields.Integer(
        allow_none=True,
        metadata={
            "description": "accepts in a row the test needed after it (0: the test was met; null: none would do)"
        },
    )


class StepDecisionSchema(Schema):
    decision_id = fields.String(required=True)
    step_id = fields.String(required=True)
    suggestion_id = fields.String(required=True)
    execution_id = fields.String(required=True)
    decision = one_of(DECISIONS, required=True)
    operator = fields.String(required=True, metadata={"description": "the deciding user's email"})
    created_at = fields.DateTime(required=True)
    latency_ms = fields.Float()
    outcome = one_of(
        (FAILED_STEP,),
        allow_none=True,
        metadata={"description": "step_failed: the correction's step then failed because of it"},
    )
    counted = StrictBoolean(
        required=True,
        metadata={
            "description": "whether the readiness test counts it (a skip is not counted, nor, where the workspace "
            "takes evidence from attentive operators only, a decision by an operator below the bars)"
        },
    )
    attentive = StrictBoolean(
        metadata={"description": "its operator was attentive when they decided (docs/autonomy.md#check-suggestions)"}
    )
    evidence = fields.Nested(
        DecisionEffectSchema,
        allow_none=True,
        metadata={
            "description": "what it did to the scope's evidence; null when the evidence restarted since (a demotion, a "
            "clear drop) or the decision is still held for its undo window"
        },
    )


class StepDecisionList(Schema):
    items = fields.List(fields.Nested(StepDecisionSchema), required=True)


@blp.route("/workflows/<workflow_id>/steps/<step_id>/decisions")
class StepDecisions(MethodView):
    @blp.arguments(StepDecisionsArgs, location="query")
    @blp.response(200, StepDecisionList)
    def get(self, args, workflow_id, step_id):
        """The decisions behind a step's readiness: its latest decisions, newest first (an index, no scan)."""
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return {"items": step_decisions.latest(session, wf, step_id, args["limit"])}


@blp.route("/workflows/<workflow_id>/decisions")
class WorkflowDecisions(MethodView):
    @blp.arguments(StepDecisionsArgs, location="query")
    @blp.response(200, StepDecisionList)
    def get(self, args, workflow_id):
        """The decisions behind the workflow's own readiness (all its steps pooled), newest first, each with what it
        did to the workflow's e-value."""
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return {"items": step_decisions.latest_of_workflow(session, wf, args["limit"])}


class ReviewersArgs(Schema):
    step_id = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={
            "description": "one step's decisions only (an agent step's calls of one tool: `<step>:<tool>`); "
            "without it, all the workflow's"
        },
    )
    days = fields.Integer(
        load_default=reviewers.DEFAULT_DAYS,
        validate=validate.Range(min=1, max=reviewers.MAX_DAYS),
        metadata={"description": "the decisions of the last this many days"},
    )


class ReviewerSchema(Shape):
    """One operator's time to decide and fast accepts (core/coaching/attention.py)."""

    operator = fields.String(required=True, metadata={"description": "the deciding user's email"})
    decisions = fields.Integer(required=True, metadata={"description": "their decisions, of every kind"})
    accepts = fields.Integer(required=True)
    median_ms = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "the median time to decide, from when the suggestion was shown (the mean of the two middle "
            "ones for an even count); null: no decision (they decided only checks here)"
        },
    )
    p90_ms = fields.Float(
        required=True,
        allow_none=True,
        metadata={"description": "the nearest-rank 90th percentile: 90% of their decisions took at most this"},
    )
    fast_accepts = fields.Integer(required=True, metadata={"description": "their accepts faster than the floor"})
    fast_accept_share = fields.Float(
        required=True, allow_none=True, metadata={"description": "fast_accepts / accepts (null: no accept)"}
    )
    checks = fields.Nested(
        lambda: ReviewerChecksSchema(),
        required=True,
        metadata={"description": "their check suggestions across the workspace, and whether they are attentive now"},
    )


class ReviewerChecksSchema(Shape):
    """One operator's check figures across the workspace (core/coaching/checks.py,
    docs/autonomy.md#check-suggestions)."""

    checks = fields.Integer(required=True, metadata={"description": "checks they decided with an outcome (not skips)"})
    catches = fields.Integer(required=True, metadata={"description": "rejected, corrected or done by hand"})
    misses = fields.Integer(required=True, metadata={"description": "accepted"})
    catch_rate = fields.Float(required=True, allow_none=True, metadata={"description": "catches / checks; null: none"})
    accepts = fields.Integer(
        required=True,
        metadata={
            "description": "their accepts counted for the fast-accept bar (from when checks or the restriction were on)"
        },
    )
    fast_accepts = fields.Integer(required=True, metadata={"description": "of those, under the floor when made"})
    fast_accept_share = fields.Float(
        required=True, allow_none=True, metadata={"description": "fast_accepts / accepts; null: no accept counted"}
    )
    attentive = StrictBoolean(
        required=True,
        metadata={
            "description": "at least min_checks checks, catch_rate >= min_catch_rate and fast_accept_share <= "
            "max_fast_share (GET /api/workspace/reviews)"
        },
    )


class ReviewersSchema(Shape):
    workflow_id = fields.String(required=True)
    step_id = fields.String(required=True, allow_none=True, metadata={"description": "null: all the workflow's steps"})
    days = fields.Integer(required=True)
    since = fields.DateTime(required=True, metadata={"description": "the oldest decision counted is this recent"})
    floor_ms = fields.Integer(
        required=True,
        metadata={
            "description": "the workspace's floor used (GET /api/workspace/reviews): an accept faster is a fast accept"
        },
    )
    scopes = fields.List(
        fields.String(), required=True, metadata={"description": "the step ids (and `<step>:<tool>`) step_id may name"}
    )
    decisions = fields.Integer(required=True, metadata={"description": "the decisions counted, all operators"})
    evidence_from = one_of(
        ("all", "attentive"),
        required=True,
        metadata={
            "description": "the workspace's setting: attentive, only attentive operators' decisions are readiness "
            "evidence"
        },
    )
    items = fields.List(fields.Nested(ReviewerSchema), required=True, metadata={"description": "by operator"})


@blp.route("/workflows/<workflow_id>/reviewers")
class WorkflowReviewers(MethodView):
    @requires("lead")
    @blp.arguments(ReviewersArgs, location="query")
    @blp.response(200, ReviewersSchema)
    def get(self, args, workflow_id):
        """Evidence from attentive reviews: each operator's time to decide (median, p90) and their accepts faster
        than the workspace's floor, over the workflow's (or one step's) decisions of the last `days`."""
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return reviewers.figures(session, wf, args.get("step_id"), args["days"])


@blp.route("/operators")
class OperatorMetrics(MethodView):
    @blp.response(200, OperatorList)
    def get(self):
        require("lead")
        with services().db.read() as session:
            found = totals.operators(session, workspace_id())
            charts = series.operator_series(session, workspace_id())
            items = [{"operator": name, **figures, "series": charts.get(name, [])} for name, figures in found.items()]
            return {"items": items}
