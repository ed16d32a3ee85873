"""/api/workflows: definitions in JSON or YAML; PUT makes a new version."""

from __future__ import annotations

from flask import current_app, jsonify, request
from flask.views import MethodView
from flask_smorest import current_api
from marshmallow import Schema, ValidationError, fields, validate

from api.base import Blueprint
from api.context import operator, require, requires, services, workspace_id
from api.json_schema import component_as_json_schema
from api.schemas import PageArgs, Shape, StrictBoolean, map_of, one_of, page_body, page_of
from core import gates as G
from core.coaching import autonomy
from core.coaching.levels import LEVELS
from core.errors import ValidationFailed
from core.workflow import format as F
from core.workflow.source_lines import lines_of
from services import demo
from services.autonomy import service as workflow_autonomy
from services.offload import off_loop
from services.workflows import service as workflows

blp = Blueprint("workflows", __name__, url_prefix="/api/workflows", description="Workflow definitions")


class WorkflowDefinitionSchema(F.WorkflowDefinition):
    """The body of POST and PUT: the definition format (core.workflow.format, docs/workflow-definitions.md). The
    route takes it as it was sent: the core checks it with this same schema (`_parse`), where every problem gets its
    path and, for a definition sent as text, its line."""

    def load(self, data, **kwargs):
        if not isinstance(data, dict):
            raise ValidationError({"_schema": ["Invalid input type."]})
        return data


class VersionArgs(Schema):
    version = fields.Integer(load_default=None, validate=validate.Range(min=1, max=2**31 - 1))


class ThresholdsSchema(Shape):
    """A workflow's level thresholds (docs/design.md#metrics-and-learning-levels; its own settings over the
    defaults)."""

    coaching_after = fields.Integer(required=True)
    auto_min_window = fields.Integer(required=True)
    auto_acceptance = fields.Float(required=True)
    window = fields.Integer(required=True)
    auto_alpha = fields.Float(required=True)


class WorkflowSchema(Shape):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    latest_version = fields.Integer(required=True)
    name = fields.String(required=True)
    description = fields.String()
    variables = F.Variables(metadata={"description": "its input variables by name, as written"})
    steps = F.Steps(
        required=True, metadata={"description": "the step definitions as written (docs/workflow-definitions.md)"}
    )
    human_timeout_s = F.Number(
        F.SECONDS, minimum=0, min_inclusive=False, metadata={"description": "the default deadline of its human gates"}
    )
    on_human_timeout = one_of(G.ACTIONS, metadata={"description": "what that deadline does"})
    timeout_answer = fields.Raw(metadata={"description": "free-form"})
    level = one_of(LEVELS, required=True)
    mode = one_of(autonomy.WORKFLOW_MODES, required=True)
    step_modes = map_of(
        fields.String(validate=validate.OneOf(autonomy.STEP_MODES)),
        metadata={
            "description": "steps with a mode of their own (auto: promoted alone; "
            "always_review: pinned); the others follow the workflow's mode"
        },
    )
    auto_ready = StrictBoolean(required=True)
    thresholds = fields.Nested(ThresholdsSchema)
    created_at = fields.DateTime()
    updated_at = fields.DateTime()


WorkflowPage = page_of(WorkflowSchema, "WorkflowPage")


def _parse(definition):
    """The definition checked by the core; a 422 says on which line of the sent YAML or JSON each field is."""
    try:
        return workflows.parse(services().tools.for_workspace(workspace_id()), definition)
    except ValidationFailed as exc:
        # composing YAML is Python: a large source is read in a real thread (services.offload)
        exc.lines = off_loop(lines_of, request.get_data(as_text=True), list(exc.details)) or None
        raise


@blp.route("")
class Workflows(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, WorkflowPage)
    def get(self, args):
        with services().db.read() as session:
            rows, total = workflows.list_page(session, workspace_id(), args["page"], args["per_page"])
            return page_body([workflow_autonomy.view(session, wf) for wf in rows], total, args)

    @requires("lead")
    @blp.arguments(WorkflowDefinitionSchema, content_type="application/json")
    @blp.yaml_text("the definition as YAML text")
    @blp.response(201, WorkflowSchema)
    def post(self, definition):
        svc = services()
        defn = _parse(definition)
        with svc.command() as uow:
            wf = workflows.create(
                uow.session, svc.tools.for_workspace(workspace_id()), workspace_id(), defn, operator()
            )
            return workflow_autonomy.view(uow.session, wf)


class TemplateSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    yaml = fields.String(metadata={"description": "the definition as YAML text, ready to edit and POST"}, required=True)


class TemplateList(Schema):
    items = fields.List(fields.Nested(TemplateSchema), required=True)


@blp.route("/templates")
class Templates(MethodView):
    @blp.response(200, TemplateList)
    def get(self):
        """Starting points for a new workflow: the demo workflows' definitions."""
        return {"items": demo.templates()}


@blp.route("/schema")
class DefinitionJsonSchema(MethodView):
    @blp.doc(
        responses={
            "200": {
                "description": "the workflow definition format as a JSON Schema document (draft-07)",
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        }
    )
    def get(self):
        """The definition format (the WorkflowDefinition schema of this document and every schema it reaches) as
        JSON Schema: what the web app's editor completes and checks a definition with."""
        return jsonify(definition_json_schema())


def definition_json_schema() -> dict:
    """Made once per app from its own OpenAPI document (it never changes while the app runs)."""
    cached = current_app.extensions.get("coach_definition_schema")
    if cached is None:
        components = current_api.spec.to_dict()["components"]["schemas"]
        cached = component_as_json_schema(components, "WorkflowDefinition", "Coach workflow definition")
        current_app.extensions["coach_definition_schema"] = cached
    return cached


@blp.route("/<workflow_id>")
class WorkflowById(MethodView):
    @blp.arguments(VersionArgs, location="query")
    @blp.response(200, WorkflowSchema)
    def get(self, args, workflow_id):
        with services().db.read() as session:
            wf = workflows.get(session, workspace_id(), workflow_id)
            return workflow_autonomy.view(session, wf, args["version"])

    @requires("lead")
    @blp.arguments(WorkflowDefinitionSchema, content_type="application/json")
    @blp.yaml_text("the definition as YAML text")
    @blp.response(200, WorkflowSchema)
    def put(self, definition, workflow_id):
        svc = services()
        defn = _parse(definition)
        with svc.command() as uow:
            wf = workflows.update(
                uow.session, svc.tools.for_workspace(workspace_id()), workspace_id(), workflow_id, defn, operator()
            )
            return workflow_autonomy.view(uow.session, wf)

    @requires("lead")
    @blp.response(204)
    def delete(self, workflow_id):
        with services().command() as uow:
            workflows.delete(uow.session, workspace_id(), workflow_id, operator())


class ModeArgs(Schema):
    mode = one_of(autonomy.WORKFLOW_MODES, required=True)
    force = StrictBoolean(load_default=False, metadata={"description": "promote although not AUTO-ready (admin)"})
    reason = fields.String(
        load_default=None,
        validate=validate.Length(max=1000),
        metadata={
            "description": "why a forced promotion overrules the evidence: required with force, kept in the audit log"
        },
    )


class StepModeArgs(Schema):
    mode = one_of(
        autonomy.STEP_MODES,
        required=True,
        metadata={
            "description": "auto: runs unattended with spot checks; always_review: every "
            "run is decided by a human; coaching: follows the workflow"
        },
    )
    force = StrictBoolean(load_default=False, metadata={"description": "promote although not AUTO-ready (admin)"})
    reason = fields.String(
        load_default=None,
        validate=validate.Length(max=1000),
        metadata={
            "description": "why a forced promotion overrules the evidence: required with force, kept in the audit log"
        },
    )


class StepNotReadySchema(Shape):
    step_id = fields.String(required=True)
    level = one_of(LEVELS, required=True)
    decisions = fields.Integer(required=True)
    decisions_needed = fields.Integer(allow_none=True, required=True)


class ModeResult(WorkflowSchema):
    steps_not_ready = fields.List(
        fields.Nested(StepNotReadySchema),
        metadata={
            "description": "after a promotion to AUTO: its tool steps that are not AUTO-ready on their own evidence; "
            "empty otherwise"
        },
    )


class ThresholdArgs(Schema):
    coaching_after = fields.Integer(validate=validate.Range(min=0))
    auto_min_window = fields.Integer(validate=validate.Range(min=1))
    auto_acceptance = fields.Float(validate=validate.Range(min=0, max=1))
    window = fields.Integer(validate=validate.Range(min=1, max=1000))
    auto_alpha = fields.Float(
        validate=validate.Range(min=0, max=0.5, min_inclusive=False, max_inclusive=False),
        metadata={"description": "error level of the AUTO readiness and demotion tests"},
    )


@blp.route("/<workflow_id>/mode")
class WorkflowMode(MethodView):
    @requires("lead")
    @blp.arguments(ModeArgs)
    @blp.response(200, ModeResult)
    def post(self, args, workflow_id):
        if args["force"]:
            require("admin")  # promoting a workflow that is not AUTO-ready
        svc = services()
        with svc.command() as uow:
            wf = workflow_autonomy.set_mode(
                uow,
                workspace_id(),
                workflow_id,
                args["mode"],
                force=args["force"],
                actor=operator(),
                reason=args["reason"],
            )
            view = {
                **workflow_autonomy.view(uow.session, wf),
                "steps_not_ready": workflow_autonomy.not_ready_steps(uow.session, wf) if wf.mode == "auto" else [],
            }
        return view


@blp.route("/<workflow_id>/steps/<step_id>/mode")
class WorkflowStepMode(MethodView):
    @requires("lead")
    @blp.arguments(StepModeArgs)
    @blp.response(200, WorkflowSchema)
    def post(self, args, workflow_id, step_id):
        if args["force"]:
            require("admin")  # promoting a step that is not AUTO-ready
        svc = services()
        with svc.command() as uow:
            wf = workflow_autonomy.set_step_mode(
                uow,
                workspace_id(),
                workflow_id,
                step_id,
                args["mode"],
                force=args["force"],
                actor=operator(),
                reason=args["reason"],
            )
            view = workflow_autonomy.view(uow.session, wf)
        return view


@blp.route("/<workflow_id>/thresholds")
class WorkflowThresholds(MethodView):
    @requires("lead")
    @blp.arguments(ThresholdArgs)
    @blp.response(200, WorkflowSchema)
    def put(self, args, workflow_id):
        with services().command() as uow:
            wf = workflow_autonomy.set_thresholds(uow.session, workspace_id(), workflow_id, args, operator())
            return workflow_autonomy.view(uow.session, wf)
