"""Regions of a tool scope (docs/autonomy.md#regions): a workflow's tool step (or an agent step's calls of one tool,
`<agent step>:<tool>`) or a gateway tool. Listed with their evidence and the proposals learned from the scope's
decisions; created, changed, removed and promoted by leads (a forced promotion: admins). The rules are
core/regions; storage and audit services/regions."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, require, requires, services, workspace_id
from api.replay import ProposalSchema
from api.schemas import Shape, StrictBoolean, one_of
from core.coaching import autonomy
from core.coaching.levels import LEVELS, LevelThresholds
from core.regions import proposals as P
from core.regions import region as R
from services.gateway import identities
from services.metrics import service as metrics
from services.regions import service as regions
from services.replay import history
from services.replay import service as replay
from services.unit_of_work import UnitOfWork
from services.workflows import service as workflows

blp = Blueprint(
    "regions",
    __name__,
    url_prefix="/api",
    description="Regions: named conditions over a tool's params with their own mode and evidence",
)

WHEN = (
    "a condition in the policy predicate language (docs/policies.md Predicates) over `params` (and `agent` "
    f"for a gateway tool), at most {R.MAX_WHEN} characters, e.g. `params.amount <= 200`"
)


class RegionIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=R.MAX_NAME))
    when = fields.String(required=True, metadata={"description": WHEN})
    order = fields.Integer(
        strict=True,
        validate=validate.Range(min=-(10**6), max=10**6),
        metadata={
            "description": "a call falls in the first region by order whose condition holds (default: after the last)"
        },
    )
    mode = one_of(
        (autonomy.COACHING, autonomy.ALWAYS_REVIEW),
        metadata={"description": "coaching (default) or always_review; auto only through POST /api/regions/<id>/mode"},
    )


class GatewayRegionIn(RegionIn):
    identity = fields.String(
        allow_none=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "only this agent identity's calls (its name); null: every identity's"},
    )


class RegionPatch(Schema):
    name = fields.String(validate=validate.Length(min=1, max=R.MAX_NAME))
    when = fields.String(
        metadata={
            "description": WHEN + "; a new condition restarts the region's evidence "
            "(and an AUTO region goes back to coaching)"
        }
    )
    order = fields.Integer(strict=True, validate=validate.Range(min=-(10**6), max=10**6))
    mode = one_of((autonomy.COACHING, autonomy.ALWAYS_REVIEW))
    identity = fields.String(
        allow_none=True,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "a gateway tool's region only"},
    )


class RegionModeArgs(Schema):
    mode = one_of(
        autonomy.STEP_MODES,
        required=True,
        metadata={
            "description": "auto: its calls run unattended with spot checks (409 unless its own evidence says "
            "AUTO-ready); always_review: every call is asked; coaching: asked, evidence counts"
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


class SpotChecksSchema(Shape):
    decisions = fields.Integer(required=True)
    acceptance = fields.Float(required=True)


class RegionSchema(Shape):
    id = fields.String(required=True)
    name = fields.String(required=True)
    when = fields.String(required=True)
    order = fields.Integer(required=True)
    mode = one_of(autonomy.STEP_MODES, required=True)
    scope = one_of((regions.STEP, regions.GATEWAY), required=True)
    workflow_id = fields.String(metadata={"description": "a step's region"})
    step_id = fields.String(metadata={"description": "a step's region: the step, or `<agent step>:<tool>`"})
    tool = fields.String(metadata={"description": "a gateway tool's region"})
    identity = fields.String(allow_none=True, metadata={"description": "a gateway tool's region: one identity's"})
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)
    decisions = fields.Integer(
        required=True, metadata={"description": "decisions counted since its condition was last fixed"}
    )
    acceptance = fields.Float(required=True)
    e_value = fields.Float(required=True, metadata={"description": "the readiness test's e-value"})
    threshold = fields.Float(
        required=True, metadata={"description": "AUTO-ready once e_value reaches it (1 / alpha_share)"}
    )
    auto_ready = StrictBoolean(required=True)
    decisions_needed = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "more decisions, all accepted, that would make it AUTO-ready (null: none would now)"},
    )
    level = one_of(LEVELS, required=True)
    alpha_share = fields.Float(
        required=True,
        metadata={"description": "its share of the scope's false-ready level: auto_alpha * 6 / (pi^2 j^2)"},
    )
    scope_alpha = fields.Float(required=True)
    condition_version = fields.Integer(
        required=True,
        metadata={"description": "j: the scope's count of condition versions when this one was fixed (never reused)"},
    )
    spot_checks = fields.Nested(SpotChecksSchema, required=True)


class RegionList(Schema):
    items = fields.List(fields.Nested(RegionSchema), required=True)
    proposals = fields.List(
        fields.Nested(ProposalSchema),
        required=True,
        metadata={"description": "regions Coach proposes from the scope's decisions, each with its replay"},
    )
    max_regions = fields.Integer(required=True)
    min_decisions = fields.Integer(required=True, metadata={"description": "decisions before anything is proposed"})
    identities = fields.List(
        fields.String(),
        required=True,
        metadata={
            "description": "a gateway tool's listing: the names of the workspace's agent identities (not revoked), "
            "what a region's `identity` may name; [] for a step's"
        },
    )


class ToolRegionArgs(Schema):
    identity = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=100),
        metadata={"description": "proposals for this identity's calls only"},
    )


def _tools():
    return services().tools.for_workspace(workspace_id())


def _step_scope(session, workflow_id: str, step_id: str):
    wf = workflows.get(session, workspace_id(), workflow_id)
    history.check_step(session, wf, step_id)
    return wf


def _thresholds(session, row) -> LevelThresholds:
    if row.scope == regions.STEP:
        return metrics.workflow_thresholds(workflows.get(session, row.workspace_id, row.workflow_id))
    return LevelThresholds()


def _listing(session, rows, thresholds, proposals, identities_: list[str] | None = None) -> dict:
    return {
        "items": [regions.view(session, row, thresholds) for row in rows],
        "proposals": proposals,
        "max_regions": R.MAX_REGIONS,
        "min_decisions": P.MIN_DECISIONS,
        "identities": identities_ or [],
    }


def _changed(uow: UnitOfWork, row, action: str) -> None:
    uow.events.add(
        "region_changed",
        {
            "region_id": row.id,
            "action": action,
            "mode": row.mode,
            "scope": row.scope,
            "workflow_id": row.workflow_id,
            "step_id": row.step_id,
            "tool": row.tool,
        },
        workspace=row.workspace_id,
    )


@blp.route("/workflows/<workflow_id>/steps/<step_id>/regions")
class StepRegions(MethodView):
    @requires("lead")
    @blp.response(200, RegionList)
    def get(self, workflow_id, step_id):
        """The step's regions in their order, with their evidence, and the regions Coach proposes"""
        with services().db.read() as session:
            wf = _step_scope(session, workflow_id, step_id)
            rows = regions.rows_of(session, workspace_id(), regions.STEP, regions.step_key(workflow_id, step_id))
            proposals = replay.proposals_for_step(session, workspace_id(), workflow_id, step_id, tools=_tools())
            return _listing(session, rows, metrics.workflow_thresholds(wf), proposals)

    @requires("lead")
    @blp.arguments(RegionIn)
    @blp.response(201, RegionSchema)
    def post(self, data, workflow_id, step_id):
        """A new region of the step (422 naming a bad condition; at most 8 per step)"""
        fields_ = R.check_region(data)
        svc = services()
        with svc.command() as uow:
            wf = _step_scope(uow.session, workflow_id, step_id)
            row = regions.create(
                uow.session,
                workspace_id(),
                operator(),
                regions.STEP,
                regions.step_key(workflow_id, step_id),
                fields_,
                workflow_id=workflow_id,
                step_id=step_id,
            )
            _changed(uow, row, "created")
            view = regions.view(uow.session, row, metrics.workflow_thresholds(wf))
        return view


@blp.route("/gateway/tools/<tool>/regions")
class ToolRegions(MethodView):
    @requires("lead")
    @blp.arguments(ToolRegionArgs, location="query")
    @blp.response(200, RegionList)
    def get(self, args, tool):
        """The gateway tool's regions in their order, with their evidence, and the regions Coach proposes"""
        svc = services()
        with svc.db.read() as session:
            replay.check_tool(svc, session, workspace_id(), tool)
            rows = regions.rows_of(session, workspace_id(), regions.GATEWAY, tool)
            proposals = replay.proposals_for_tool(
                session,
                workspace_id(),
                tool,
                identity=args["identity"],
                tools=replay.gateway_registry(svc, session, workspace_id()),
            )
            names = [a.name for a in identities.list_agents(session, workspace_id()) if a.revoked_at is None]
            return _listing(session, rows, LevelThresholds(), proposals, names)

    @requires("lead")
    @blp.arguments(GatewayRegionIn)
    @blp.response(201, RegionSchema)
    def post(self, data, tool):
        """A new region of the gateway tool (for one identity's calls, or every identity's)"""
        fields_ = R.check_region(data, gateway=True)
        svc = services()
        with svc.command() as uow:
            replay.check_tool(svc, uow.session, workspace_id(), tool)
            row = regions.create(uow.session, workspace_id(), operator(), regions.GATEWAY, tool, fields_, tool=tool)
            _changed(uow, row, "created")
            view = regions.view(uow.session, row, LevelThresholds())
        return view


@blp.route("/regions/<region_id>")
class OneRegion(MethodView):
    @requires("lead")
    @blp.response(200, RegionSchema)
    def get(self, region_id):
        """One region with its evidence"""
        with services().db.read() as session:
            row = regions.get(session, workspace_id(), region_id)
            return regions.view(session, row, _thresholds(session, row))

    @requires("lead")
    @blp.arguments(RegionPatch)
    @blp.response(200, RegionSchema)
    def patch(self, data, region_id):
        """Change a region's name, condition, order or mode (coaching, always_review)"""
        svc = services()
        with svc.command() as uow:
            row = regions.get(uow.session, workspace_id(), region_id)
            fields_ = R.check_region(data, partial=True, gateway=row.scope == regions.GATEWAY)
            row = regions.update(uow.session, workspace_id(), operator(), region_id, fields_)
            _changed(uow, row, "updated")
            view = regions.view(uow.session, row, _thresholds(uow.session, row))
        return view

    @requires("lead")
    @blp.response(204)
    def delete(self, region_id):
        """Remove a region: its calls follow the step's (or tool's) mode again"""
        svc = services()
        with svc.command() as uow:
            row = regions.get(uow.session, workspace_id(), region_id)
            _changed(uow, row, "deleted")
            regions.delete(uow.session, workspace_id(), operator(), region_id)


@blp.route("/regions/<region_id>/mode")
class RegionMode(MethodView):
    @requires("lead")
    @blp.arguments(RegionModeArgs)
    @blp.response(200, RegionSchema)
    def post(self, args, region_id):
        """Promote a region to AUTO (409 unless its own evidence says AUTO-ready), pin it, or set it to coaching"""
        if args["force"]:
            require("admin")  # promoting a region that is not AUTO-ready
        svc = services()
        with svc.command() as uow:
            row = regions.get(uow.session, workspace_id(), region_id)
            thresholds = _thresholds(uow.session, row)
            row = regions.set_mode(
                uow.session,
                workspace_id(),
                operator(),
                region_id,
                args["mode"],
                force=args["force"],
                reason=args["reason"],
                thresholds=thresholds,
            )
            _changed(uow, row, "mode")
            view = regions.view(uow.session, row, thresholds)
        return view
