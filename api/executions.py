"""/api/executions: start, list, read, cancel, answer a human_input step."""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api import control as control_api
from api.base import Blueprint
from api.context import operator, require, services, user_id, workspace_id
from api.schemas import PageArgs, page_body, page_of
from core.execution import states as S
from services import approvals, executions
from services.notifier import Events

blp = Blueprint("executions", __name__, url_prefix="/api/executions", description="Runs of workflows")


class StartArgs(Schema):
    workflow_id = fields.String(required=True)
    variables = fields.Dict(load_default=dict)
    mode = fields.String(load_default=None, validate=validate.OneOf(executions.MODES), metadata={
        "description": "default: the workflow's mode (coaching or auto); `normal` (no review but what policy "
                       "forces) needs the lead role"})


class ListArgs(PageArgs):
    workflow_id = fields.String()
    mode = fields.String(validate=validate.OneOf(executions.MODES))
    status = fields.String(validate=validate.OneOf(S.STATES))


class AnswerArgs(Schema):
    answer = fields.Raw(required=True, allow_none=True)


class ProgressSchema(Schema):
    done = fields.Integer()
    total = fields.Integer()
    percent = fields.Float()


class StepResultSchema(Schema):
    step_id = fields.String()
    name = fields.String()
    type = fields.String(allow_none=True)
    tool = fields.String(allow_none=True)
    status = fields.String()
    output = fields.Raw(allow_none=True)
    error = fields.String(allow_none=True)
    attempts = fields.Integer()
    params = fields.Raw(allow_none=True)
    decision = fields.String(allow_none=True)
    policy = fields.Dict(allow_none=True, metadata={
        "description": "the policy's verdict on the step's call when it was about to run, with its explanation"})
    started_at = fields.DateTime(allow_none=True)
    finished_at = fields.DateTime(allow_none=True)
    approval = fields.Dict(allow_none=True, metadata={
        "description": "{approval_id, status, kind} of the step's approval (an approval step, a reviewed tool call)"})
    definition = fields.Dict(metadata={
        "description": "what apply-correction may change (name, description, params, tool, timeout_s, retries), as "
                       "written, corrections included"})
    params_schema = fields.Dict(allow_none=True, metadata={"description": "the JSON Schema of the step's tool's params"})


class ExecutionSchema(Schema):
    execution_id = fields.String()
    workflow_id = fields.String()
    workflow_version = fields.Integer()
    mode = fields.String()
    status = fields.String()
    progress = fields.Nested(ProgressSchema)
    steps = fields.List(fields.Nested(StepResultSchema))
    is_coaching = fields.Boolean()
    variables = fields.Dict()
    error = fields.Dict(allow_none=True, metadata={"description": "{step_id, message} when the execution failed"})
    gate = fields.Dict(allow_none=True, metadata={
        "description": "what a human is asked, while waiting; with a deadline (human_timeout_s): its `deadline` "
                       "(ISO), `on_timeout` and `timeout_s`"})
    created_at = fields.DateTime()
    updated_at = fields.DateTime()
    started_at = fields.DateTime(allow_none=True)
    finished_at = fields.DateTime(allow_none=True)
    started_by = fields.String(allow_none=True, metadata={"description": "the user id of whoever started it"})


ExecutionPage = page_of(ExecutionSchema, "ExecutionPage")


def _view(session, ex):
    svc = services()
    return executions.view(ex, svc.definitions.for_execution(session, ex), approvals.by_step(session, ex.id),
                           svc.tools.for_workspace(workspace_id()))


def start_execution(args: dict) -> dict:
    # a normal run skips the review a workflow in coaching (or auto's spot checks) would give: a lead's choice
    require("lead" if args["mode"] == "normal" else "operator")
    svc = services()
    with svc.db.transaction() as session:
        ex = executions.start(session, svc.definitions, workspace_id(), args["workflow_id"],
                              args["variables"], args["mode"], started_by=user_id(), actor=operator())
        body = _view(session, ex)
    svc.runner.schedule(body["execution_id"])
    return body


@blp.route("/")
class Executions(MethodView):
    @blp.arguments(ListArgs, location="query")
    @blp.response(200, ExecutionPage)
    def get(self, args):
        with services().db.read() as session:
            filters = {k: args.get(k) for k in ("workflow_id", "mode", "status")}
            rows, total = executions.list_page(session, workspace_id(), page=args["page"],
                                               per_page=args["per_page"], **filters)
            return page_body([_view(session, ex) for ex in rows], total, args)

    @blp.arguments(StartArgs)
    @blp.response(201, ExecutionSchema)
    def post(self, args):
        return start_execution(args)


@blp.route("/<execution_id>")
class ExecutionById(MethodView):
    @blp.response(200, ExecutionSchema)
    def get(self, execution_id):
        with services().db.read() as session:
            return _view(session, executions.get(session, workspace_id(), execution_id))


@blp.route("/<execution_id>/cancel")
class Cancel(MethodView):
    @blp.response(200, ExecutionSchema)
    def post(self, execution_id):
        require("operator")
        svc, events = services(), Events()
        with svc.db.transaction() as session:
            ex = executions.cancel(session, workspace_id(), execution_id, operator(), events)
            body, update = _view(session, ex), executions.update_event(ex)
        svc.notifier.send(events)
        svc.notifier.execution_update(workspace_id(), update)
        return body


@blp.route("/<execution_id>/steps/<step_id>/answer")
class Answer(MethodView):
    @blp.arguments(AnswerArgs)
    @blp.response(200, ExecutionSchema)
    def post(self, args, execution_id, step_id):
        require("operator")
        svc = services()
        with svc.db.transaction() as session:
            ex = executions.answer(session, svc.definitions, workspace_id(), execution_id, step_id, args["answer"])
            body = _view(session, ex)
        svc.runner.schedule(execution_id)
        return body


# interactive control (pause / apply-correction / resume / execution-state): api/control.py, shared with /api/plans
control_api.register(blp, "execution_id", plan=False)
