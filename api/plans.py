"""/api/plans: ad-hoc plans (inline steps) created -> approved -> executed, read, saved as a workflow; and the
interactive control routes (api/control.py) under /api/plans/<plan_id>/..."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, missing, validate

from api import control as control_api
from api.base import Blueprint
from api.context import operator, require, requires, role, services, user_id, workspace_id
from api.execution_schemas import ExecutionErrorSchema, ProgressSchema
from api.schemas import PageArgs, RunVariables, Shape, one_of, page_body, page_of
from api.workflows import WorkflowDefinitionSchema, WorkflowSchema
from core.execution import states as S
from core.plans import PLAN_MODES
from core.workflow import format as F
from services.autonomy import service as workflow_autonomy
from services.plans import service as plans

blp = Blueprint("plans", __name__, url_prefix="/api/plans", description="Ad-hoc plans: inline steps, approved, run")


class PlanArgs(WorkflowDefinitionSchema):
    """A plan's definition is a workflow's (the workflows' validator checks it, with the same paths), and its mode."""

    name = fields.String(metadata={"description": "default: 'Ad-hoc plan'"})
    mode = fields.String(load_default="normal", validate=validate.OneOf(PLAN_MODES))

    def load(self, data, **kwargs):
        data = super().load(data, **kwargs)
        try:
            mode = self.fields["mode"].deserialize(data.get("mode", missing))
        except ValidationError as exc:
            raise ValidationError({"mode": exc.messages}) from None
        return {**data, "mode": mode}


class PlanListArgs(PageArgs):
    status = fields.String(validate=validate.OneOf(S.STATES))
    mode = fields.String(validate=validate.OneOf(PLAN_MODES))
    created_by = fields.String(validate=validate.Length(max=254))


class ExecuteArgs(Schema):
    variables = RunVariables(load_default=None, allow_none=True)
    mode = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(PLAN_MODES))


class SaveArgs(Schema):
    name = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=200))


class PlanSchema(Shape):
    plan_id = fields.String(required=True)
    execution_id = fields.String(required=True)
    status = one_of(S.STATES, required=True, metadata={"description": "draft, approved, then the execution's status"})
    mode = one_of(PLAN_MODES, required=True)
    name = fields.String(required=True)
    description = fields.String()
    variables = F.Variables(
        metadata={"description": "its input variables by name, as a workflow declares them"}, required=True
    )
    values = RunVariables(metadata={"description": "the variables it runs (or would run) with"}, required=True)
    steps = F.Steps(
        metadata={"description": "as given, with corrections applied: step definitions (docs/workflow-definitions.md)"},
        required=True,
    )
    progress = fields.Nested(ProgressSchema, required=True)
    created_by = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    approved_by = fields.String(allow_none=True, required=True)
    approved_at = fields.DateTime(allow_none=True, required=True)
    approver_role = fields.String(
        allow_none=True, metadata={"description": "the role its approval needed"}, required=True
    )
    saved_workflow_id = fields.String(allow_none=True, required=True)
    corrected_steps = fields.List(fields.String(), required=True)


class PlanStatusSchema(Shape):
    plan_id = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    progress = fields.Nested(ProgressSchema, required=True)
    current_step = fields.String(allow_none=True, required=True)
    started_at = fields.DateTime(allow_none=True, required=True)
    finished_at = fields.DateTime(allow_none=True, required=True)
    duration_s = fields.Float(allow_none=True, required=True)
    error = fields.Nested(ExecutionErrorSchema, allow_none=True)


PlanPage = page_of(PlanSchema, "PlanPage")


def _view(session, plan, ex):
    return plans.view(plan, ex, services().definitions.for_execution(session, ex))


@blp.route("")
class Plans(MethodView):
    @blp.arguments(PlanListArgs, location="query")
    @blp.response(200, PlanPage)
    def get(self, args):
        with services().db.read() as session:
            rows, total = plans.list_page(
                session,
                workspace_id(),
                status=args.get("status"),
                mode=args.get("mode"),
                created_by=args.get("created_by"),
                page=args["page"],
                per_page=args["per_page"],
            )
            return page_body([_view(session, plan, ex) for plan, ex in rows], total, args)

    @requires("operator")
    @blp.arguments(PlanArgs)
    @blp.yaml_text("the plan (a definition and its mode) as YAML text")
    @blp.response(201, PlanSchema)
    def post(self, body):
        svc = services()
        defn, mode = plans.parse(svc.tools.for_workspace(workspace_id()), body)
        with svc.command() as uow:
            ex = plans.create(
                uow.session, svc.tools.for_workspace(workspace_id()), workspace_id(), defn, mode, operator(), user_id()
            )
            plan, ex = plans.get(uow.session, workspace_id(), ex.id)
            return _view(uow.session, plan, ex)


@blp.route("/<plan_id>")
class PlanById(MethodView):
    @blp.response(200, PlanSchema)
    def get(self, plan_id):
        with services().db.read() as session:
            return _view(session, *plans.get(session, workspace_id(), plan_id))


@blp.route("/<plan_id>/approve")
class Approve(MethodView):
    @blp.response(200, PlanSchema)
    def post(self, plan_id):
        """Approve a draft: a lead, or an operator when the policy allows every call of the plan"""
        require("operator")
        svc = services()
        with svc.command() as uow:
            plan, ex = plans.approve(
                uow.session,
                svc.definitions,
                svc.tools.for_workspace(workspace_id()),
                workspace_id(),
                plan_id,
                operator(),
                role(),
            )
            return _view(uow.session, plan, ex)


@blp.route("/<plan_id>/execute")
class Execute(MethodView):
    @blp.arguments(ExecuteArgs, required=False)  # the plan as it stands: no body
    @blp.response(200, PlanSchema)
    def post(self, args, plan_id):
        """Run an approved plan (normal or coaching); a draft is 409"""
        require("operator")
        svc = services()
        with svc.command() as uow:
            plan, ex = plans.execute(
                uow.session,
                svc.definitions,
                workspace_id(),
                plan_id,
                operator(),
                args.get("variables"),
                args.get("mode"),
            )
            uow.run_next(plan_id)
            body = _view(uow.session, plan, ex)
        return body


@blp.route("/<plan_id>/status")
class Status(MethodView):
    @blp.response(200, PlanStatusSchema)
    def get(self, plan_id):
        with services().db.read() as session:
            return plans.status(plans.get(session, workspace_id(), plan_id)[1])


@blp.route("/<plan_id>/save-as-workflow")
class SaveAsWorkflow(MethodView):
    @requires("lead")
    @blp.arguments(SaveArgs, required=False)  # named after the plan: no body
    @blp.response(201, WorkflowSchema)
    def post(self, args, plan_id):
        """A new workflow (version 1) with the plan's steps as they stand, corrections included"""
        svc = services()
        with svc.command() as uow:
            wf = plans.save_as_workflow(
                uow.session,
                svc.tools.for_workspace(workspace_id()),
                workspace_id(),
                plan_id,
                operator(),
                args.get("name"),
            )
            return workflow_autonomy.view(uow.session, wf)


control_api.register(blp, "plan_id", plan=True)
