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
    roles = fields.List(fields.String(validate=validate.OneOf(A.ROLES)))
    users = fields.List(fields.String())


def _instant(**kw):
    # approvals are served as stored and replayed (JSON): instants are ISO 8601 strings in UTC
    return fields.String(metadata={"format": "date-time", **kw.pop("metadata", {})}, **kw)


class ApprovalDecisionSchema(Shape):
    user = fields.String()
    decision = one_of((*A.DECISIONS, "expire"), metadata={"description": "expire: cancel, timeout"})
    comment = fields.String()
    at = _instant()


class ApprovalSchema(Shape):
    approval_id = fields.String(required=True)
    execution_id = fields.String(allow_none=True, metadata={"description": "null for a gateway call's review"})
    step_id = fields.String(metadata={"description": "gateway: the tool's name (cut to 64 characters)"})
    kind = fields.String(
        validate=validate.OneOf(A.KINDS),
        metadata={"description": "step | tool_call | plan | gateway (an outside agent's call held by the MCP gateway)"},
    )
    agent = fields.String(allow_none=True, metadata={"description": "gateway: the agent identity that made the call"})
    status = one_of(A.STATUSES, required=True)
    message = fields.String()
    tool = fields.String(allow_none=True)
    params = ToolParams(allow_none=True, metadata={"description": "the call's params"})
    policy = fields.Nested(
        VerdictSchema, allow_none=True, metadata={"description": "the policy verdict that forced the review"}
    )
    approvers = fields.Nested(ApproversSchema)
    quorum = fields.Integer()
    approvals = fields.Integer(metadata={"description": "distinct approvals counted so far"})
    separate_duties = StrictBoolean()
    started_by = fields.String(allow_none=True)
    decisions = fields.List(fields.Nested(ApprovalDecisionSchema))
    deadline = _instant(allow_none=True)
    timeout_s = fields.Float(allow_none=True)
    on_timeout = fields.String(validate=validate.OneOf(A.ON_TIMEOUT))
    created_at = _instant()
    decided_at = _instant(allow_none=True)


class ApprovalDecisionResultSchema(Shape):
    approval = fields.Nested(ApprovalSchema)
    execution = fields.Nested(
        ExecutionUpdateSchema, allow_none=True, metadata={"description": "null for a gateway call's review"}
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
