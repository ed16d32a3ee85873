"""/api/agents: the agent identities that call the workspace's tools through the MCP gateway at /mcp (admins).

The token is in the answer of the POST only: it is stored hashed and cannot be shown again. DELETE revokes (the row
stays, for the audit log and for the calls it made)."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import CredentialOut
from services.gateway import held, identities

blp = Blueprint(
    "agents",
    __name__,
    url_prefix="/api/agents",
    description="Agent identities of the MCP gateway (/mcp): bearer tokens for outside agents (admins)",
)


class AgentIn(Schema):
    name = fields.String(
        required=True,
        validate=validate.Regexp(
            identities.NAME,
            error=("1 to 100 characters: letters, digits, '_', '.', '-', starting with a letter or digit"),
        ),
        metadata={"description": "how policies (match.agent), the queue and the audit log name this agent"},
    )
    description = fields.String(load_default="", validate=validate.Length(max=2000))


class AgentOut(CredentialOut):
    description = fields.String(required=True)


class AgentCreated(AgentOut):
    token = fields.String(
        metadata={"description": "the bearer token for /mcp: shown this once, stored hashed"}, required=True
    )
    mcp_path = fields.String(metadata={"description": "where the agent connects (streamable HTTP)"}, required=True)


class AgentList(Schema):
    items = fields.List(fields.Nested(AgentOut), required=True)


@blp.route("")
class Agents(MethodView):
    @requires("admin")
    @blp.response(200, AgentList)
    def get(self):
        with services().db.read() as session:
            return {"items": [identities.view(r) for r in identities.list_agents(session, workspace_id())]}

    @requires("admin")
    @blp.arguments(AgentIn)
    @blp.response(201, AgentCreated)
    def post(self, data):
        """A new agent identity; the answer carries its token, once"""
        with services().command() as uow:
            row, token = identities.create(
                uow.session, workspace_id(), data["name"], data.get("description"), operator()
            )
            return {**identities.view(row, token), "mcp_path": "/mcp"}


@blp.route("/<agent_id>")
class AgentById(MethodView):
    @requires("admin")
    @blp.response(204)
    def delete(self, agent_id):
        """Revoke: the token stops working at once; its calls held for a review end (never run, their reviews
        expired: deciding one is a 409 saying why; a request waiting on one answers that it was revoked); the
        identity stays listed, with `revoked_at`"""
        svc = services()
        with svc.command() as uow:
            # its held calls' reviews leave the queues
            held.revoke(uow, workspace_id(), agent_id, operator())
