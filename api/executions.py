"""/api/executions: start, list, read, cancel, answer a human_input step (recovery and history: api/recovery.py)."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api import control as control_api
from api import recovery as recovery_api
from api.base import Blueprint
from api.context import operator, require, services, user_id, workspace_id
from api.execution_schemas import ExecutionSchema, TranscriptSchema
from api.schemas import PageArgs, RunVariables, one_of, page_body, page_of
from core.execution import states as S
from services.agents import llm_provider
from services.agents import store as agent_store
from services.approvals import service as approvals
from services.executions import service as executions
from services.orchestration import control
from services.triggers import starts as trigger_starts
from services.workflows import service as workflows

blp = Blueprint("executions", __name__, url_prefix="/api/executions", description="Runs of workflows")


class StartArgs(Schema):
    workflow_id = fields.String(required=True)
    variables = RunVariables(load_default=dict)
    mode = fields.String(
        load_default=None,
        validate=validate.OneOf(executions.MODES),
        metadata={
            "description": "default: the workflow's mode (coaching or auto); `normal` (no review but what policy "
            "forces) needs the lead role"
        },
    )


class ListArgs(PageArgs):
    workflow_id = fields.String()
    mode = one_of(executions.MODES)
    status = one_of(S.STATES)


class AnswerArgs(Schema):
    answer = fields.Raw(required=True, allow_none=True)


ExecutionPage = page_of(ExecutionSchema, "ExecutionPage")


def _view(session, ex, *, new: bool = False):
    """`new`: an execution started in this transaction, which has no approvals yet (its runner asks for them)."""
    svc = services()
    return executions.view(
        ex,
        svc.definitions.for_execution(session, ex),
        {} if new else approvals.by_step(session, ex.id),
        svc.tools.for_workspace(workspace_id()),
    )


def start_execution(args: dict) -> dict:
    # a normal run skips the review a workflow in coaching (or auto's spot checks) would give: a lead's choice
    require("lead" if args["mode"] == "normal" else "operator")
    svc = services()
    with svc.command() as uow:
        ex = executions.start(
            uow.session,
            svc.definitions,
            workspace_id(),
            args["workflow_id"],
            args["variables"],
            args["mode"],
            started_by=user_id(),
            actor=operator(),
        )
        # an agent step with no LLM provider: a 409 saying what to set, rather than a run that fails
        llm_provider.require(uow.session, svc.settings, workspace_id(), svc.definitions.for_execution(uow.session, ex))
        uow.run_next(ex.id)
        body = _view(uow.session, ex, new=True)
    return body


@blp.route("/")
class Executions(MethodView):
    @blp.arguments(ListArgs, location="query")
    @blp.response(200, ExecutionPage)
    def get(self, args):
        with services().db.read() as session:
            filters = {k: args.get(k) for k in ("workflow_id", "mode", "status")}
            rows, total = executions.list_page(
                session, workspace_id(), page=args["page"], per_page=args["per_page"], **filters
            )
            names = workflows.names(session, (ex.workflow_id for ex in rows))
            return page_body(
                [{**_view(session, ex), "workflow_name": names.get(ex.workflow_id)} for ex in rows], total, args
            )

    @blp.arguments(StartArgs)
    @blp.response(201, ExecutionSchema)
    def post(self, args):
        return start_execution(args)


@blp.route("/<execution_id>")
class ExecutionById(MethodView):
    @blp.response(200, ExecutionSchema)
    def get(self, execution_id):
        with services().db.read() as session:
            ex = executions.get(session, workspace_id(), execution_id)
            return {**_view(session, ex), "trigger": trigger_starts.of_execution(session, ex.id)}


@blp.route("/<execution_id>/cancel")
class Cancel(MethodView):
    @blp.response(200, ExecutionSchema)
    def post(self, execution_id):
        require("operator")
        with services().command() as uow:
            ex = control.cancel(uow, workspace_id(), execution_id, operator())
            body = _view(uow.session, ex)
        return body


@blp.route("/<execution_id>/steps/<step_id>/answer")
class Answer(MethodView):
    @blp.arguments(AnswerArgs)
    @blp.response(200, ExecutionSchema)
    def post(self, args, execution_id, step_id):
        require("operator")
        svc = services()
        with svc.command() as uow:
            ex = control.answer(
                uow,
                svc.definitions,
                workspace_id(),
                execution_id,
                step_id,
                args["answer"],
                operator(),
            )
            uow.run_next(execution_id)
            body = _view(uow.session, ex)
        return body


@blp.route("/<execution_id>/steps/<step_id>/transcript")
class Transcript(MethodView):
    @blp.response(200, TranscriptSchema)
    def get(self, execution_id, step_id):
        """An agent step's conversation: LLM turns, tool calls with their verdict, decision and result"""
        with services().db.read() as session:
            ex = executions.get(session, workspace_id(), execution_id)
            row = executions.step_state(ex, step_id)
            return {
                "execution_id": ex.id,
                "step_id": step_id,
                "status": row.status,
                "messages": agent_store.transcript(session, ex.id, step_id),
            }


# interactive control (pause / apply-correction / resume / execution-state): api/control.py, shared with /api/plans
control_api.register(blp, "execution_id", plan=False)
# recovery of a failed run (retry / resume-from / rerun) and its history: api/recovery.py
recovery_api.register(blp)
