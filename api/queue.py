"""/api/coaching/queue and /api/coaching/questions: the operator's work list across executions.

The queue holds the pending suggestions (a coaching suggestion, a spot check, a correction request after a reject);
questions are the executions waiting for a person's answer (a human_input step, a pause for clarification). Both
take the same filters and order, newest first by default.
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import fields, validate

from api.base import Blueprint
from api.coaching import SuggestionSchema
from api.context import services, workspace_id
from api.schemas import PageArgs, RunVariables, Shape, one_of, page_body, page_of
from core import gates as G
from core.execution import states as S
from services.coaching import service as coaching
from services.coaching import worklist
from services.executions.service import MODES

blp = Blueprint("queue", __name__, url_prefix="/api/coaching", description="The operator's work queue")

KINDS = (*worklist.SUGGESTION_KINDS, *worklist.QUESTION_KINDS)
MAX_AGE_S = 10 * 365 * 24 * 3600


class WorkListArgs(PageArgs):
    workflow_id = fields.String(validate=validate.Length(max=64))
    step_id = fields.String(validate=validate.Length(max=64))
    kind = fields.String(
        validate=validate.OneOf(KINDS),
        metadata={
            "description": "suggestion (coaching), spot_check, correction_request (after a reject): suggestions; "
            "human_input, clarification: questions. A kind of the other list gives an empty page"
        },
    )
    min_age_s = fields.Integer(
        validate=validate.Range(min=0, max=MAX_AGE_S), metadata={"description": "opened at least this many seconds ago"}
    )
    max_age_s = fields.Integer(
        validate=validate.Range(min=0, max=MAX_AGE_S), metadata={"description": "opened at most this many seconds ago"}
    )
    q = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "search in the workflow's name, the step id, the tool and the run's variables"},
    )
    order = fields.String(load_default="newest", validate=validate.OneOf(("newest", "oldest")))


def _filters(args: dict) -> worklist.Filters:
    return worklist.Filters(
        workflow_id=args.get("workflow_id"),
        step_id=args.get("step_id"),
        kind=args.get("kind"),
        min_age_s=args.get("min_age_s"),
        max_age_s=args.get("max_age_s"),
        q=args.get("q"),
        oldest_first=args["order"] == "oldest",
    )


class QueueItemSchema(SuggestionSchema):
    workflow_name = fields.String(required=True)
    execution_status = one_of(
        S.STATES, required=True, metadata={"description": "waiting_decision, or paused when the session is paused"}
    )
    execution_mode = one_of(MODES, required=True)
    variables = RunVariables(metadata={"description": "the run's variables, so two runs of a workflow differ"})


class QuestionSchema(Shape):
    execution_id = fields.String(required=True)
    workflow_id = fields.String(required=True)
    workflow_name = fields.String(required=True)
    workflow_version = fields.Integer()
    step_id = fields.String(required=True)
    step_name = fields.String(required=True)
    kind = one_of(
        worklist.QUESTION_KINDS,
        required=True,
        metadata={
            "description": "human_input (answer: POST /api/executions/<id>/steps/<step_id>/answer) or clarification "
            "(POST /api/executions/<id>/resume)"
        },
    )
    question = fields.String(required=True, allow_none=True)
    paused_at = fields.String(required=True, allow_none=True)
    deadline = fields.String(required=True, allow_none=True)
    on_timeout = one_of(G.ACTIONS, allow_none=True, required=True)
    variables = RunVariables(required=True, metadata={"description": "the run's variables"})
    execution_mode = one_of(MODES, required=True)
    waiting_since = fields.DateTime(required=True)


QueuePage = page_of(QueueItemSchema, "QueuePage")
QuestionPage = page_of(QuestionSchema, "QuestionPage")


@blp.route("/queue")
class Queue(MethodView):
    @blp.arguments(WorkListArgs, location="query")
    @blp.response(200, QueuePage)
    def get(self, args):
        svc, workspace = services(), workspace_id()
        tools = svc.tools.for_workspace(workspace)  # once for the page, not once per row
        with svc.db.read() as session:
            rows, total = worklist.suggestions(
                session, workspace, _filters(args), page=args["page"], per_page=args["per_page"]
            )
            items = [
                {
                    **coaching.described(session, svc.definitions, tools, sug),
                    "workflow_name": name,
                    "execution_status": ex.status,
                    "execution_mode": ex.mode,
                    "variables": ex.variables or {},
                }
                for sug, ex, name in rows
            ]
        return page_body(items, total, args)


@blp.route("/questions")
class Questions(MethodView):
    @blp.arguments(WorkListArgs, location="query")
    @blp.response(200, QuestionPage)
    def get(self, args):
        """Executions waiting for a person's answer: a human_input step's question, or a pause for clarification."""
        svc = services()
        with svc.db.read() as session:
            rows, total = worklist.questions(
                session, workspace_id(), _filters(args), page=args["page"], per_page=args["per_page"]
            )
            items = []
            for ex, name in rows:
                step_id = (ex.gate or {}).get("step_id")
                defn = svc.definitions.for_execution(session, ex)
                step_name = defn.step(step_id).name if step_id in defn.step_ids else None
                items.append(worklist.question_view(ex, name, step_name))
        return page_body(items, total, args)
