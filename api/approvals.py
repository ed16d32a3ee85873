"""/api/approvals: approval steps and policy-forced reviews of tool calls: list, read, decide."""

from __future__ import annotations

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, require, role, services, user_id, workspace_id
from api.execution_schemas import ExecutionUpdateSchema
from api.policies import VerdictSchema
from api.schemas import PageArgs, Shape, StrictBoolean, ToolParams, one_of, page_body, page_of
from core import approvals as A
from services.approvals import service as approvals
from services.decisions import approval_undo
from services.decisions import approvals as approval_decisions

blp = Blueprint(
    "approvals", __name__, url_prefix="/api/approvals", description="Approval steps and policy-forced reviews"
)


class ApprovalListArgs(PageArgs):
    status = fields.String(
        validate=validate.OneOf(list(A.STATUS_FILTERS)),
        metadata={"description": "pending | decided (approved or rejected) | expired | approved | rejected"},
    )
    execution_id = fields.String()


class ApprovalDecisionArgs(Schema):
    decision = fields.String(required=True, validate=validate.OneOf(A.DECISIONS))
    comment = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=5000))
    params = ToolParams(
        load_default=None,
        allow_none=True,
        metadata={"description": "edit only (tool_call approvals): the params the tool runs with"},
    )


class ApproversSchema(Shape):
    roles = fields.List(fields.String(validate=validate.OneOf(A.ROLES)), required=True)
    users = fields.List(fields.String(), required=True)


def _instant(**kw):
    # approvals are served as stored and replayed (JSON): instants are ISO 8601 strings in UTC
    return fields.String(metadata={"format": "date-time", **kw.pop("metadata", {})}, **kw)


class ApprovalDecisionSchema(Shape):
    user = fields.String(required=True)
    decision = one_of((*A.DECISIONS, "expire"), metadata={"description": "expire: cancel, timeout"}, required=True)
    comment = fields.String(required=True)
    at = _instant(required=True)


class ApprovalSchema(Shape):
    approval_id = fields.String(required=True)
    execution_id = fields.String(
        allow_none=True, metadata={"description": "null for a gateway call's review"}, required=True
    )
    step_id = fields.String(metadata={"description": "gateway: the tool's name (cut to 64 characters)"}, required=True)
    kind = fields.String(
        validate=validate.OneOf(A.KINDS),
        metadata={"description": "step | tool_call | plan | gateway (an outside agent's call held by the MCP gateway)"},
        required=True,
    )
    agent = fields.String(
        allow_none=True, metadata={"description": "gateway: the agent identity that made the call"}, required=True
    )
    status = one_of(A.STATUSES, required=True)
    message = fields.String(required=True)
    tool = fields.String(allow_none=True, required=True)
    params = ToolParams(allow_none=True, metadata={"description": "the call's params"}, required=True)
    policy = fields.Nested(
        VerdictSchema,
        allow_none=True,
        metadata={"description": "the policy verdict that forced the review"},
        required=True,
    )
    approvers = fields.Nested(ApproversSchema, required=True)
    quorum = fields.Integer(required=True)
    approvals = fields.Integer(metadata={"description": "distinct approvals counted so far"}, required=True)
    separate_duties = StrictBoolean(required=True)
    started_by = fields.String(allow_none=True, required=True)
    decisions = fields.List(fields.Nested(ApprovalDecisionSchema), required=True)
    deadline = _instant(allow_none=True, required=True)
    timeout_s = fields.Float(allow_none=True, required=True)
    on_timeout = fields.String(validate=validate.OneOf(A.ON_TIMEOUT), required=True)
    created_at = _instant(required=True)
    decided_at = _instant(allow_none=True, required=True)


class ApprovalDecisionResultSchema(Shape):
    approval = fields.Nested(ApprovalSchema, required=True)
    execution = fields.Nested(
        ExecutionUpdateSchema,
        allow_none=True,
        metadata={"description": "null for a gateway call's review"},
        required=True,
    )


ApprovalPage = page_of(ApprovalSchema, "ApprovalPage")


@blp.route("")
class Approvals(MethodView):
    @blp.arguments(ApprovalListArgs, location="query")
    @blp.response(200, ApprovalPage)
    def get(self, args):
        with services().db.read() as session:
            rows, total = approvals.list_page(
                session,
                workspace_id(),
                status=args.get("status"),
                execution_id=args.get("execution_id"),
                page=args["page"],
                per_page=args["per_page"],
            )
            return page_body([approvals.view(a) for a in rows], total, args)


@blp.route("/<approval_id>")
class ApprovalById(MethodView):
    @blp.response(200, ApprovalSchema)
    def get(self, approval_id):
        with services().db.read() as session:
            return approvals.view(approvals.get(session, workspace_id(), approval_id))

    @blp.arguments(ApprovalDecisionArgs)
    @blp.response(200, ApprovalDecisionResultSchema)
    def post(self, body, approval_id):
        require("operator")
        actor = A.Actor(user_id=user_id(), email=operator(), role=role())
        key = request.headers.get("Idempotency-Key") or None
        return approval_decisions.submit(services(), workspace_id(), approval_id, body, actor, key)


@blp.route("/<approval_id>/undo")
class ApprovalUndo(MethodView):
    @blp.response(200, ApprovalDecisionResultSchema)
    def post(self, approval_id):
        """Take back your decision on an approval while it is held for the undo window: pending again (409 once
        its step started or when nothing is held; 403 for someone else's decision)."""
        require("operator")
        return approval_undo.submit(services(), workspace_id(), approval_id, operator())
