"""/api/audit: the workspace's audit log (lead and up), as pages, as streamed JSON lines, and its chain check."""

from __future__ import annotations

from datetime import UTC

from flask import Response
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import requires, services, workspace_id
from api.schemas import PageArgs, StrictBoolean, page_body, page_of
from services.audit import service as audit
from services.users import service as users

blp = Blueprint(
    "audit",
    __name__,
    url_prefix="/api/audit",
    description="Audit log: append-only, hash-chained per workspace (lead and up)",
)

JSONL = "application/x-ndjson"


class AuditQuery(PageArgs):
    execution_id = fields.String(metadata={"description": "only events about this execution"})
    user = fields.String(metadata={"description": "only events by this actor (the user's email)"})
    action = fields.String(metadata={"description": "only this action: " + ", ".join(audit.ACTIONS)})
    since = fields.AwareDateTime(
        default_timezone=UTC, metadata={"description": "ISO 8601; only events at or after it (no offset: UTC)"}
    )
    per_page = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))
    format = fields.String(
        load_default="json",
        validate=validate.OneOf(("json", "jsonl")),
        metadata={
            "description": "`json` (default): one page, newest first. `jsonl`: every matching event, oldest first, "
            f"streamed as `{JSONL}` (one JSON object per line, the item shape below); page and "
            "per_page are ignored."
        },
    )


class AuditEventSchema(Schema):
    id = fields.Integer(required=True)
    seq = fields.Integer(metadata={"description": "1, 2, 3 … per workspace"}, required=True)
    workspace_id = fields.String()
    actor = fields.String(required=True)
    action = fields.String(required=True)
    target_type = fields.String(required=True)
    target_id = fields.String(allow_none=True, required=True)
    target_label = fields.String(
        allow_none=True,
        metadata={"description": "a member target's email (not part of the hashed event; null for other targets)"},
    )
    execution_id = fields.String(allow_none=True, required=True)
    before = fields.Raw(allow_none=True, required=True)
    after = fields.Raw(allow_none=True, required=True)
    result = fields.String(required=True)
    created_at = fields.String(metadata={"description": "ISO 8601, UTC"}, required=True)
    prev_hash = fields.String(metadata={"description": "hash of the previous event (64 zeros for the first)"})
    hash = fields.String(metadata={"description": "sha256(prev_hash + canonical JSON of the event's fields)"})


AuditPage = page_of(AuditEventSchema, "AuditPage")


class VerifySchema(Schema):
    ok = StrictBoolean(required=True)
    checked = fields.Integer(metadata={"description": "events found intact, oldest first"}, required=True)
    first_bad_seq = fields.Integer(metadata={"description": "where the chain first fails (when not ok)"})
    reason = fields.String(metadata={"description": "an edited row, a deleted row (gap in seq) or a broken link"})


class ActionsSchema(Schema):
    actions = fields.List(fields.String(), metadata={"description": "every action the log records"})


@blp.route("/actions")
class AuditActions(MethodView):
    @requires("lead")
    @blp.response(200, ActionsSchema)
    def get(self):
        """The actions audit events can have (for filters)."""
        return {"actions": list(audit.ACTIONS)}


@blp.route("")
class AuditLog(MethodView):
    @requires("lead")
    @blp.arguments(AuditQuery, location="query")
    @blp.response(200, AuditPage)
    @blp.doc(
        responses={
            200: {
                "content": {
                    JSONL: {
                        "schema": {
                            "type": "string",
                            "description": "with ?format=jsonl: one AuditEvent JSON object per line",
                        }
                    }
                }
            }
        }
    )
    def get(self, args):
        """The workspace's audit events, newest first; `?format=jsonl` streams them all as JSON lines."""
        filters = {
            "execution_id": args.get("execution_id"),
            "actor": args.get("user"),
            "action": args.get("action"),
            "since": args.get("since"),
        }
        if args["format"] == "jsonl":
            return _stream(services().db, workspace_id(), filters)
        with services().db.read() as session:
            rows, total = audit.list_page(
                session, workspace_id(), page=args["page"], per_page=args["per_page"], **filters
            )
            # a member's events name the member by id (a hashed field): the page says who that is, by email
            emails = users.emails_of(
                session, workspace_id(), {r.target_id for r in rows if r.target_type == "user" and r.target_id}
            )
            items = [
                {**audit.view(r), "target_label": emails.get(r.target_id or "") if r.target_type == "user" else None}
                for r in rows
            ]
            return page_body(items, total, args)


def _stream(db, ws: str, filters: dict) -> Response:
    """The body is written after the view returns: it reads in a read-only session of its own (db.read(): on SQLite
    no write lock is held while the download lasts), in batches."""

    def lines():
        with db.read() as session:
            yield from audit.iter_jsonl(session, ws, **filters)

    return Response(
        lines(),
        mimetype=JSONL,
        headers={"Content-Disposition": 'attachment; filename="audit.jsonl"', "Cache-Control": "no-store"},
    )


@blp.route("/verify")
class AuditVerify(MethodView):
    @requires("lead")
    @blp.response(200, VerifySchema)
    def get(self):
        """Replay the workspace's hash chain: `{ok, checked}`, or the first bad seq and why."""
        with services().db.read() as session:
            return audit.verify(session, workspace_id())
