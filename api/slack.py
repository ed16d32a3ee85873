"""Slack: the workspace's Slack app (admins), each member's own Slack user id, and the interactivity endpoint Slack
calls when someone clicks Approve or Reject (docs/slack.md)."""

from __future__ import annotations

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields

from api.base import Blueprint
from api.context import operator, requires, services, user_id, workspace_id
from api.schemas import map_of, one_of
from core import notifications as N
from services.decisions import slack as interactions
from services.slack import check
from services.slack import service as slack_settings

blp = Blueprint(
    "slack",
    __name__,
    url_prefix="/api/workspace/slack",
    description="This workspace's Slack app: reviews posted with Approve / Reject buttons",
)
hook_blp = Blueprint(
    "slack_interactions",
    __name__,
    url_prefix="/api/integrations/slack",
    description="Slack's interactivity requests (signed by Slack; no Coach login)",
)


class LastDeliverySchema(Schema):
    status = one_of(
        N.STATUSES, metadata={"description": "pending (to be tried again), sending, sent or failed (given up)"}
    )
    error = fields.String(
        allow_none=True,
        metadata={
            "description": "Slack's error of the last attempt, e.g. 'Slack: invalid_auth'; null when it was sent"
        },
    )
    attempts = fields.Integer()
    at = fields.DateTime(metadata={"description": "when it was sent, else when it was made"})


class SlackTestSchema(Schema):
    ok = fields.Boolean(required=True)
    team = fields.String(allow_none=True, metadata={"description": "the Slack workspace the token belongs to"})
    bot_user = fields.String(allow_none=True, metadata={"description": "the bot user's name"})
    bot_user_id = fields.String(allow_none=True)
    code = fields.String(
        metadata={
            "description": "Slack's error code (invalid_auth, network_error…), or not_configured, secret_unreadable"
        }
    )
    failure = fields.String(metadata={"description": "what went wrong and what to do, in words"})


class SlackSettingsSchema(Schema):
    bot_token_set = fields.Boolean(metadata={"description": "whether a bot token is stored (never returned)"})
    signing_secret_set = fields.Boolean(metadata={"description": "whether a signing secret is stored (never returned)"})
    default_channel = fields.String(allow_none=True, metadata={"description": "channel id reviews go to by default"})
    interactivity_path = fields.String(
        metadata={
            "description": "the path to give Slack as the Request URL of "
            "Interactivity, after this server's public origin"
        }
    )
    updated_by = fields.String(allow_none=True)
    updated_at = fields.DateTime(allow_none=True)
    interactivity_url = fields.String(
        metadata={
            "description": "the full Request URL to give Slack (the server's COACH_PUBLIC_URL and interactivity_path)"
        }
    )
    interactivity_unreachable = fields.String(
        allow_none=True,
        metadata={
            "description": "why Slack cannot reach interactivity_url (a loopback, private or local address), else null"
        },
    )
    last_delivery = fields.Nested(
        LastDeliverySchema,
        allow_none=True,
        metadata={
            "description": "the newest review message tried on Slack, with Slack's error when it failed; null: none yet"
        },
    )


class SlackSettingsArgs(Schema):
    bot_token = fields.String(
        allow_none=True,
        load_default=None,
        metadata={"description": "xoxb-… (stored encrypted); absent or null keeps the stored one, empty removes it"},
    )
    signing_secret = fields.String(
        allow_none=True,
        load_default=None,
        metadata={
            "description": "the app's Signing Secret (stored encrypted); absent or null keeps it, empty removes it"
        },
    )
    default_channel = fields.String(
        allow_none=True,
        load_default=None,
        metadata={"description": "a channel id (C…, G…); absent or null keeps it, empty removes it"},
    )


class SlackUserSchema(Schema):
    slack_user_id = fields.String(
        allow_none=True,
        load_default=None,
        metadata={"description": "your Slack member id in this workspace's Slack (U…); empty or null clears it"},
    )


class InteractionAnswerSchema(Schema):
    outcome = one_of(("decided", "refused", "unknown_user", "ignored", "modal_opened"))
    message = fields.String()
    response_action = fields.String(metadata={"description": "view_submission: clear (closes the modal) or errors"})
    errors = map_of(
        fields.String(),
        metadata={"description": "view_submission with errors: the modal's block id -> what is wrong"},
    )


@blp.route("")
class SlackSettings(MethodView):
    @requires("admin")
    @blp.response(200, SlackSettingsSchema)
    def get(self):
        svc = services()
        with svc.db.read() as session:
            return {
                **slack_settings.view(session, workspace_id()),
                **check.interactivity(svc.settings, workspace_id()),
                "last_delivery": check.last_delivery(session, workspace_id()),
            }

    @requires("admin")
    @blp.arguments(SlackSettingsArgs)
    @blp.response(200, SlackSettingsSchema)
    def put(self, args):
        """Set the bot token, signing secret and default channel (audited, never the secrets); 422 names the field."""
        svc = services()
        with svc.command() as uow:
            return {
                **slack_settings.save(uow.session, svc.settings, workspace_id(), args, operator()),
                **check.interactivity(svc.settings, workspace_id()),
                "last_delivery": check.last_delivery(uow.session, workspace_id()),
            }

    @requires("admin")
    @blp.response(204)
    def delete(self):
        """Remove the workspace's Slack app (audited): nothing is posted, clicks are refused."""
        with services().command() as uow:
            slack_settings.remove(uow.session, workspace_id(), operator())


@blp.route("/test")
class SlackTest(MethodView):
    @requires("admin")
    @blp.response(200, SlackTestSchema)
    def post(self):
        """Ask Slack whether it takes the stored bot token (auth.test; nothing is posted): the team and bot user, or
        Slack's error in words (`ok: false`, also when no token is stored)."""
        svc = services()
        return check.test(svc.db, svc.settings, workspace_id())


@blp.route("/me")
class MySlackUser(MethodView):
    @requires("operator")
    @blp.response(200, SlackUserSchema)
    def get(self):
        with services().db.read() as session:
            return slack_settings.my_id(session, workspace_id(), user_id())

    @requires("operator")
    @blp.arguments(SlackUserSchema)
    @blp.response(200, SlackUserSchema)
    def put(self, args):
        """Your Slack member id here: your clicks in Slack act as you, and reviews may be sent to you. 409 when
        another member set the same id."""
        with services().command() as uow:
            return slack_settings.set_my_id(
                uow.session, workspace_id(), user_id(), args.get("slack_user_id"), operator()
            )


@hook_blp.route("/<workspace_id>/interactions")
class Interactions(MethodView):
    @hook_blp.doc(
        requestBody={
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {
                        "type": "object",
                        "properties": {"payload": {"type": "string", "description": "Slack's JSON payload"}},
                    }
                }
            },
        },
        security=[],
    )
    @hook_blp.response(200, InteractionAnswerSchema)
    def post(self, workspace_id):
        """Slack's interactivity request: verified with the workspace's signing secret (401 when the signature is
        bad or older than 5 minutes), then a click decides as the Coach member with that Slack user id."""
        answer = interactions.handle(services(), workspace_id, request.get_data(cache=True), request.headers)
        return answer.json()
