"""Starting workflows from outside (docs/triggers.md): a workflow's incoming webhooks and cron schedules
(/api/workflows/<id>/hooks, /api/workflows/<id>/schedules: leads manage them, everyone reads), and the public
receiver of signed deliveries, POST /api/hooks/<hook_id> (no cookie, no token: the signature is the auth)."""

from __future__ import annotations

import functools
import time

from flask import Flask, g, request
from flask.views import MethodView
from marshmallow import INCLUDE, Schema, ValidationError, fields, pre_load, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import CredentialOut, RunVariables, StrictBoolean, map_of, one_of
from config import Settings
from core import triggers as T
from core.execution import states as S
from services.executions import service as executions
from services.triggers import hooks, schedules
from services.workflows import service as workflows

blp = Blueprint(
    "triggers",
    __name__,
    url_prefix="/api/workflows",
    description="A workflow's incoming webhooks and cron schedules (docs/triggers.md)",
)
hooks_blp = Blueprint(
    "hooks",
    __name__,
    url_prefix="/api/hooks",
    description="Signed deliveries of incoming webhooks: each starts the hook's workflow once",
)
RECEIVE_ENDPOINT = "hooks.Receive"
MODE = fields.String(
    load_default=None,
    allow_none=True,
    validate=validate.OneOf(executions.MODES),
    metadata={
        "description": "the mode of the executions it starts; null: the workflow's own "
        "(coaching, or auto once promoted)"
    },
)


class HookIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    mapping = map_of(
        fields.String(validate=validate.Length(min=1, max=1000)),
        keys=fields.String(validate=validate.Length(min=1, max=200)),
        load_default=dict,
        metadata={
            "description": "variable -> dotted path in the body (order.id, items.0.sku); "
            "empty: the body's top-level keys are the variables"
        },
    )
    mode = MODE


class HookOut(CredentialOut):
    workflow_id = fields.String(required=True)
    mapping = map_of(fields.String(), metadata={"description": "variable -> dotted path in the body"}, required=True)
    mode = one_of(executions.MODES, allow_none=True, required=True)
    path = fields.String(metadata={"description": "where the sender POSTs: /api/hooks/<id>"}, required=True)
    url = fields.String(metadata={"description": "the same, on the origin this request came to"}, required=True)


class HookCreated(HookOut):
    secret = fields.String(metadata={"description": "the HMAC key, shown this once (stored encrypted)"}, required=True)


class HookList(Schema):
    items = fields.List(fields.Nested(HookOut), required=True)


class ScheduleIn(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    cron = fields.String(
        required=True,
        validate=validate.Length(min=1, max=T.MAX_CRON),
        metadata={"description": "5 fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * MON-FRI'"},
    )
    timezone = fields.String(
        load_default="UTC",
        validate=validate.Length(min=1, max=64),
        metadata={"description": "an IANA time zone, e.g. Europe/Berlin"},
    )
    variables = RunVariables(load_default=dict, metadata={"description": "the variables of every run it starts"})
    mode = MODE
    enabled = StrictBoolean(load_default=True)


class SchedulePatch(Schema):
    name = fields.String(validate=validate.Length(min=1, max=100))
    cron = fields.String(validate=validate.Length(min=1, max=T.MAX_CRON))
    timezone = fields.String(validate=validate.Length(min=1, max=64))
    variables = RunVariables()
    mode = fields.String(allow_none=True, validate=validate.OneOf(executions.MODES))
    enabled = StrictBoolean()


class ScheduleOut(Schema):
    id = fields.String(required=True)
    workflow_id = fields.String(required=True)
    name = fields.String(required=True)
    cron = fields.String(required=True)
    timezone = fields.String(required=True)
    description = fields.String(metadata={"description": "the cron expression in words"}, required=True)
    variables = RunVariables(required=True)
    mode = one_of(executions.MODES, allow_none=True, required=True)
    enabled = StrictBoolean(required=True)
    next_fire_at = fields.DateTime(allow_none=True, metadata={"description": "null while disabled"}, required=True)
    next_fire_times = fields.List(
        fields.DateTime(), metadata={"description": "the next few fire times (UTC)"}, required=True
    )
    last_fired_at = fields.DateTime(allow_none=True, required=True)
    last_execution_id = fields.String(allow_none=True, required=True)
    last_error = fields.String(
        metadata={"description": "why its last fire started nothing, if it did not"}, required=True
    )
    created_by = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class ScheduleList(Schema):
    items = fields.List(fields.Nested(ScheduleOut), required=True)


class PreviewIn(Schema):
    cron = fields.String(required=True, validate=validate.Length(min=1, max=T.MAX_CRON))
    timezone = fields.String(load_default="UTC", validate=validate.Length(min=1, max=64))


class PreviewOut(Schema):
    cron = fields.String(required=True)
    timezone = fields.String(required=True)
    description = fields.String(required=True)
    next_fire_times = fields.List(fields.DateTime(), required=True)


class HookBody(Schema):
    """Any JSON object: mapped to the workflow's variables (the hook's mapping, or its top-level keys)."""

    class Meta:
        unknown = INCLUDE

    @pre_load
    def an_object(self, data, **_kwargs):
        if not isinstance(data, dict):
            raise ValidationError(
                "must be a JSON object whose fields are mapped to the workflow's variables", field_name="body"
            )
        return data


class Triggered(Schema):
    execution_id = fields.String()
    workflow_id = fields.String()
    mode = one_of(executions.MODES)
    status = one_of(S.STATES)
    delivery_id = fields.String()
    duplicate = StrictBoolean(metadata={"description": "true: this delivery id was seen before; nothing new started"})


def _hook_view(row) -> dict:
    view = hooks.view(row)
    return {**view, "url": request.url_root.rstrip("/") + view["path"]}


def _workflow(session, workflow_id: str) -> None:
    workflows.get(session, workspace_id(), workflow_id)  # 404 for another workspace's workflow


@blp.route("/<workflow_id>/hooks")
class Hooks(MethodView):
    @blp.response(200, HookList)
    def get(self, workflow_id):
        with services().db.read() as session:
            _workflow(session, workflow_id)
            return {"items": [_hook_view(r) for r in hooks.list_hooks(session, workspace_id(), workflow_id)]}

    @requires("lead")
    @blp.arguments(HookIn)
    @blp.response(201, HookCreated)
    def post(self, data, workflow_id):
        """A new hook: its secret is in this answer only"""
        svc = services()
        with svc.command() as uow:
            row, secret = hooks.create(
                uow.session,
                hooks.sealer(svc.settings.secret_key),
                svc.definitions,
                workspace_id(),
                workflow_id,
                data,
                operator(),
            )
            return {**_hook_view(row), "secret": secret}


@blp.route("/<workflow_id>/hooks/<hook_id>")
class HookById(MethodView):
    @requires("lead")
    @blp.response(204)
    def delete(self, workflow_id, hook_id):
        """Revoke: its deliveries are answered 410 from now on (the hook stays listed, revoked)"""
        with services().command() as uow:
            hooks.revoke(uow.session, workspace_id(), workflow_id, hook_id, operator())


@blp.route("/<workflow_id>/schedules")
class Schedules(MethodView):
    @blp.response(200, ScheduleList)
    def get(self, workflow_id):
        with services().db.read() as session:
            _workflow(session, workflow_id)
            return {
                "items": [schedules.view(r) for r in schedules.list_schedules(session, workspace_id(), workflow_id)]
            }

    @requires("lead")
    @blp.arguments(ScheduleIn)
    @blp.response(201, ScheduleOut)
    def post(self, data, workflow_id):
        svc = services()
        with svc.command() as uow:
            return schedules.view(
                schedules.create(uow.session, svc.definitions, workspace_id(), workflow_id, data, operator())
            )


@blp.route("/<workflow_id>/schedules/preview")
class SchedulePreview(MethodView):
    @blp.arguments(PreviewIn, location="query")
    @blp.response(200, PreviewOut)
    def get(self, data, workflow_id):
        """The next fire times of a cron expression in a zone, and the rule in words (nothing is stored)"""
        with services().db.read() as session:
            _workflow(session, workflow_id)
        return schedules.preview(data["cron"], data["timezone"])


@blp.route("/<workflow_id>/schedules/<schedule_id>")
class ScheduleById(MethodView):
    @requires("lead")
    @blp.arguments(SchedulePatch)
    @blp.response(200, ScheduleOut)
    def patch(self, data, workflow_id, schedule_id):
        """Change it, enable or disable it: a new rule, or enabling it again, counts from now"""
        svc = services()
        with svc.command() as uow:
            return schedules.view(
                schedules.change(
                    uow.session, svc.definitions, workspace_id(), workflow_id, schedule_id, data, operator()
                )
            )

    @requires("lead")
    @blp.response(204)
    def delete(self, workflow_id, schedule_id):
        with services().command() as uow:
            schedules.delete(uow.session, workspace_id(), workflow_id, schedule_id, operator())


def _signed(view):
    """Before the body is even parsed: the hook must exist (404), be active (410) and the request be signed by its
    secret within the time window (401), with a delivery id (400)."""

    @functools.wraps(view)
    def checked(*args, **kwargs):
        svc = services()
        g.trigger_delivery = hooks.authenticate(
            svc.db,
            hooks.sealer(svc.settings.secret_key),
            kwargs["hook_id"],
            request.headers,
            request.get_data(cache=True),
            time.time(),
        )
        return view(*args, **kwargs)

    return checked


_HEADERS = [
    {
        "in": "header",
        "name": T.SIGNATURE_HEADER,
        "required": True,
        "schema": {"type": "string"},
        "description": "sha256=<hex HMAC-SHA256 of '<timestamp>.<raw body>' with the hook's secret>",
    },
    {
        "in": "header",
        "name": T.TIMESTAMP_HEADER,
        "required": True,
        "schema": {"type": "integer"},
        "description": f"Unix seconds; refused when more than {T.TOLERANCE_S} s from the server's clock",
    },
    {
        "in": "header",
        "name": T.DELIVERY_HEADER,
        "required": True,
        "schema": {"type": "string"},
        "description": "the sender's id of this delivery: a repeat returns the first execution",
    },
]


@hooks_blp.route("/<hook_id>")
class Receive(MethodView):
    @hooks_blp.doc(security=[], parameters=_HEADERS)
    @_signed
    @hooks_blp.arguments(HookBody)
    @hooks_blp.response(201, Triggered)
    @hooks_blp.alt_response(
        200, schema=Triggered, description="a delivery id seen before: its first execution, nothing new started"
    )
    def post(self, body, hook_id):
        """Start the hook's workflow with the body mapped to its variables (422 naming the field that does not fit)"""
        svc = services()
        delivery = g.trigger_delivery
        ex, new = hooks.deliver(svc.runner, delivery, body)
        answer = {
            "execution_id": ex.id,
            "workflow_id": ex.workflow_id,
            "mode": ex.mode,
            "status": ex.status,
            "delivery_id": delivery.delivery_id,
            "duplicate": not new,
        }
        return answer, 201 if new else 200


def limit_deliveries(app: Flask, limiter, settings: Settings) -> None:
    """At most COACH_HOOK_RATE_LIMIT deliveries per hook (Flask-Limiter, the app's limiter: in the message queue's
    Redis when there is one, shared by every server); every request counts, refused ones too."""
    if RECEIVE_ENDPOINT not in app.view_functions or not settings.hook_rate_limit:
        return
    per_hook = limiter.limit(
        settings.hook_rate_limit, key_func=lambda: f"hook:{(request.view_args or {}).get('hook_id', '?')}"
    )
    app.view_functions[RECEIVE_ENDPOINT] = per_hook(app.view_functions[RECEIVE_ENDPOINT])
