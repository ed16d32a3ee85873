"""/api/workspace/llm: this workspace's own LLM provider for agent steps (admins): read, set, remove, test.

The API key is write-only: answers say whether one is set, never the key. Agent steps use the workspace's provider
when one is set, else the server's COACH_LLM_* settings (services/agents/llm_provider.py).
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields

from api.base import Blueprint
from api.context import operator, requires, services, workspace_id
from api.schemas import Checked, StrictBoolean, one_of
from services.agents import llm_provider

blp = Blueprint(
    "llm_provider",
    __name__,
    url_prefix="/api/workspace/llm",
    description="This workspace's LLM provider for agent steps (an OpenAI-compatible server)",
)


class ServerDefaultSchema(Schema):
    configured = fields.Boolean(metadata={"description": "whether the server sets COACH_LLM_BASE_URL"}, required=True)
    model = fields.String(allow_none=True, metadata={"description": "COACH_LLM_MODEL"}, required=True)


class ProviderSchema(Schema):
    base_url = fields.String(
        allow_none=True,
        metadata={
            "description": "the OpenAI-compatible API's base URL, e.g. https://api.openai.com/v1 or "
            "http://127.0.0.1:11434/v1 (Ollama); held to the workspace's outbound rules"
        },
        required=True,
    )
    model = fields.String(
        allow_none=True, metadata={"description": "the model of agent steps that name none"}, required=True
    )
    api_key_set = fields.Boolean(
        metadata={"description": "whether an API key is stored (it is never returned)"}, required=True
    )
    updated_by = fields.String(allow_none=True, required=True)
    updated_at = fields.DateTime(allow_none=True, required=True)
    in_use = one_of(
        ("workspace", "server", "none"),
        metadata={
            "description": "which provider agent steps use now: `workspace` (this one), `server` (COACH_LLM_*) "
            "or `none`"
        },
        required=True,
    )
    server_default = fields.Nested(ServerDefaultSchema, required=True)


class ProviderArgs(Schema):
    base_url = Checked("string", required=True, metadata={"description": "http:// or https:// URL of the API"})
    model = Checked("string", required=True, metadata={"description": "the model's name on that server"})
    api_key = Checked(
        "string",
        allow_none=True,
        load_default=None,
        metadata={"description": "a new key (stored encrypted); absent, null or empty keeps the stored one"},
    )
    clear_api_key = StrictBoolean(load_default=False, metadata={"description": "remove the stored key"})


class TestSchema(Schema):
    ok = fields.Boolean(required=True)
    answer = fields.String(metadata={"description": "the model's answer, when ok"})
    failure = fields.String(metadata={"description": "what went wrong, in words, when not ok"})
    source = one_of(
        ("workspace", "server", "none"), metadata={"description": "which provider was asked"}, required=True
    )
    base_url = fields.String(allow_none=True)
    model = fields.String(allow_none=True, required=True)
    elapsed_ms = fields.Integer()


@blp.route("")
class Provider(MethodView):
    @requires("admin")
    @blp.response(200, ProviderSchema)
    def get(self):
        svc = services()
        with svc.db.read() as session:
            return llm_provider.view(session, svc.settings, workspace_id())

    @requires("admin")
    @blp.arguments(ProviderArgs)
    @blp.response(200, ProviderSchema)
    def put(self, args):
        """Set the provider (audited: the URL, the model and whether a key is set, never the key). 422 names the
        field: a bad URL or model, or a URL the workspace's outbound rules refuse."""
        svc = services()
        return llm_provider.save(svc.db, svc.settings, workspace_id(), args, operator())

    @requires("admin")
    @blp.response(204)
    def delete(self):
        """Remove the workspace's provider: agent steps use the server's COACH_LLM_* settings again (audited)."""
        svc = services()
        llm_provider.remove(svc.db, svc.settings, workspace_id(), operator())


@blp.route("/test")
class ProviderTest(MethodView):
    @requires("admin")
    @blp.response(200, TestSchema)
    def post(self):
        """One small real request to the provider agent steps use now (the saved one): its answer, or the error in
        words (`ok: false`, also when no provider is configured at all)."""
        return llm_provider.test(services(), workspace_id())
