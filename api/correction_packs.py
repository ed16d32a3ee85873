"""/api/correction-packs: what operators' corrections taught each step; leads enable, export, import."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import INCLUDE, Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import SentValueChange, Shape, StrictBoolean, ValueChange, map_of
from services.coaching import corrections

blp = Blueprint("correction_packs", __name__, url_prefix="/api/correction-packs", description="Correction packs")


class PackQuery(Schema):
    workflow_id = fields.String()


class ChangeGroupSchema(ValueChange):
    field = fields.String(required=True)
    count = fields.Integer(required=True, validate=validate.Range(min=0))


class LearnedRuleSchema(Shape, SentValueChange):
    field = fields.String(required=True)
    count = fields.Integer(required=True)
    share = fields.Float(required=True, metadata={"description": "among the corrections of that field"})
    since = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "when it started applying (ISO 8601); null while the pack is disabled, or if never seen"
        },
    )


class LearnedRuleRefSchema(Shape, SentValueChange):
    field = fields.String(required=True)


class RuleChangeSchema(Shape):
    at = fields.String(required=True, metadata={"format": "date-time"})
    started = fields.List(fields.Nested(LearnedRuleRefSchema), required=True)
    stopped = fields.List(fields.Nested(LearnedRuleRefSchema), required=True)


class PackSchema(Schema):
    id = fields.String(required=True)
    workflow_id = fields.String(required=True)
    step_id = fields.String(required=True)
    enabled = StrictBoolean(required=True)
    corrections = fields.Integer(metadata={"description": "corrections recorded for this step"}, required=True)
    changes = fields.List(
        fields.Nested(ChangeGroupSchema), metadata={"description": "most frequent first"}, required=True
    )
    field_corrections = map_of(
        fields.Integer(),
        metadata={
            "description": "per field: the corrections that changed it, among which "
            "a change must reach the consistency bar"
        },
        required=True,
    )
    rules = fields.List(
        fields.Nested(LearnedRuleSchema),
        metadata={"description": "learned rules later suggestions apply"},
        required=True,
    )
    rules_changed_at = fields.String(
        allow_none=True,
        metadata={"description": "when a learned rule last started or stopped applying (ISO 8601), null if never seen"},
        required=True,
    )
    last_rule_change = fields.Nested(RuleChangeSchema, allow_none=True, required=True)
    discounted = fields.Integer(
        metadata={
            "description": "corrections taken back out because their step then failed "
            "because of them (they count towards no rule)"
        },
        required=True,
    )
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class PackList(Schema):
    items = fields.List(fields.Nested(PackSchema), required=True)


class PackPatch(Schema):
    enabled = StrictBoolean(required=True)


class ChangeArgs(SentValueChange):
    field = fields.String(required=True, validate=validate.Length(min=1, max=1000))


class PackStatsSchema(Schema):
    # required, so that a body that is not an export (the pack's own view, {}) is a 422 instead of
    # an import that replaces the pack's learning with nothing
    corrections = fields.Integer(required=True, validate=validate.Range(min=0))
    groups = fields.List(fields.Nested(ChangeGroupSchema), required=True)


class PackExport(Schema):
    class Meta:
        unknown = INCLUDE

    format = fields.String(required=True)
    workflow_id = fields.String(required=True)
    step_id = fields.String(required=True)
    enabled = StrictBoolean(load_default=True)
    stats = fields.Nested(PackStatsSchema, required=True)


@blp.route("")
class Packs(MethodView):
    @blp.arguments(PackQuery, location="query")
    @blp.response(200, PackList)
    def get(self, args):
        with services().db.read() as session:
            packs = corrections.list_packs(session, workspace_id(), args.get("workflow_id"))
            return {"items": [corrections.view(p) for p in packs]}


@blp.route("/<pack_id>")
class PackById(MethodView):
    @blp.response(200, PackSchema)
    def get(self, pack_id):
        with services().db.read() as session:
            return corrections.view(corrections.get(session, workspace_id(), pack_id))

    @requires("lead")
    @blp.arguments(PackPatch)
    @blp.response(200, PackSchema)
    def patch(self, args, pack_id):
        svc = services()
        with svc.command() as uow:
            view = corrections.view(corrections.set_enabled(uow, workspace_id(), pack_id, args["enabled"], operator()))
        return view


@blp.route("/<pack_id>/remove-change")
class PackChangeRemoval(MethodView):
    @requires("lead")
    @blp.arguments(ChangeArgs)
    @blp.response(200, PackSchema)
    def post(self, args, pack_id):
        """Remove one change (field, before → after) that was wrong: it counts towards no learned rule (audited)."""
        svc = services()
        with svc.command() as uow:
            view = corrections.view(corrections.remove_change(uow, workspace_id(), pack_id, args, operator()))
        return view


@blp.route("/<pack_id>/export")
class PackExportResource(MethodView):
    @requires("lead")
    @blp.response(200, PackExport)
    def get(self, pack_id):
        with services().db.read() as session:
            return corrections.export(corrections.get(session, workspace_id(), pack_id))


@blp.route("/import")
class PackImport(MethodView):
    @requires("lead")
    @blp.arguments(PackExport)
    @blp.response(201, PackSchema)
    def post(self, data):
        svc = services()
        with svc.command() as uow:
            view = corrections.view(corrections.import_pack(uow, workspace_id(), data, operator()))
        return view
