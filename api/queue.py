"""/api/coaching/queue: the pending suggestions of the workspace across executions, newest first."""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import fields

from api.base import Blueprint
from api.coaching import SuggestionSchema
from api.context import services, workspace_id
from api.schemas import PageArgs, page_body, page_of
from services import coaching

blp = Blueprint("queue", __name__, url_prefix="/api/coaching", description="The operator's work queue")


class QueueItemSchema(SuggestionSchema):
    workflow_name = fields.String()
    execution_status = fields.String(metadata={"description": "waiting_decision, or paused when the session is paused"})
    execution_mode = fields.String()


QueuePage = page_of(QueueItemSchema, "QueuePage")


@blp.route("/queue")
class Queue(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, QueuePage)
    def get(self, args):
        svc = services()
        with svc.db.read() as session:
            rows, total = coaching.queue(session, workspace_id(), page=args["page"], per_page=args["per_page"])
            items = []
            for sug, ex, name in rows:
                items.append({**coaching.described(session, svc.definitions, svc.tools.for_workspace(workspace_id()), sug), "workflow_name": name,
                              "execution_status": ex.status, "execution_mode": ex.mode})
        return page_body(items, total, args)
