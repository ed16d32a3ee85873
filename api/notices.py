"""/api/notices: the dashboard's notices (recent demotions and learned-rule changes), for every member."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import services, workspace_id
from api.schemas import ValueChange
from services.metrics import notices

blp = Blueprint(
    "notices",
    __name__,
    url_prefix="/api/notices",
    description=(
        "Recent demotions (workflows, steps, gateway tools) and learned-rule changes, from the audit log (every member)"
    ),
)


class NoticesArgs(Schema):
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=50))


class RuleSchema(ValueChange):
    field = fields.String(required=True)
    count = fields.Integer()
    share = fields.Float()


class NoticeSchema(Schema):
    id = fields.Integer(
        metadata={"description": "the audit event's seq (the `audit_seq` of the pushed event)"}, required=True
    )
    kind = fields.String(validate=validate.OneOf(notices.KINDS), required=True)
    at = fields.String(metadata={"description": "ISO 8601, UTC"}, required=True)
    actor = fields.String(
        metadata={"description": "who: a user's email, or `system` (spot checks, corrections)"}, required=True
    )
    workflow_id = fields.String(allow_none=True, required=True)
    workflow_name = fields.String(allow_none=True, metadata={"description": "null when the workflow is gone"})
    step_id = fields.String(
        allow_none=True, metadata={"description": "a step's demotion, or the pack's step"}, required=True
    )
    reason = fields.String(allow_none=True, metadata={"description": "why a demotion happened"}, required=True)
    spot_check_rate = fields.Float(
        allow_none=True, metadata={"description": "a demotion by spot checks: their acceptance"}
    )
    tool = fields.String(allow_none=True, metadata={"description": "gateway_demotion: the MCP gateway tool"})
    agent = fields.String(
        allow_none=True,
        metadata={
            "description": "gateway_demotion: the agent identity whose calls of the tool were demoted (null: all)"
        },
    )
    pack_id = fields.String(metadata={"description": "a learned-rule change: its correction pack"})
    cause = fields.String(metadata={"description": "a learned-rule change: correction, enabled, disabled, import"})
    started = fields.List(fields.Nested(RuleSchema), metadata={"description": "rules that started applying"})
    stopped = fields.List(fields.Nested(RuleSchema), metadata={"description": "rules that stopped applying"})


class NoticeList(Schema):
    items = fields.List(fields.Nested(NoticeSchema), required=True)


@blp.route("")
class Notices(MethodView):
    @blp.arguments(NoticesArgs, location="query")
    @blp.response(200, NoticeList)
    def get(self, args):
        """The workspace's newest demotions and learned-rule changes (last 7 days), newest first."""
        with services().db.read() as session:
            return {"items": notices.recent(session, workspace_id(), limit=args["limit"])}
