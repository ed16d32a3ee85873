"""/api/tool-servers: the workspace's MCP servers (admins), and /api/tools: every tool the workspace can use.

A server's tools join the workspace's registry as `<server>.<tool>`. Headers and bearer tokens are write-only:
a view names the headers, never their values. `POST /<id>/refresh` lists the server's tools now ("test").
"""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.base import Blueprint
from api.context import operator, requires, services, tools, workspace_id
from api.schemas import StrictBoolean, ToolSchema, map_of
from core.tools import RISKS
from services.tools import is_builtin
from services.toolservers import service

blp = Blueprint(
    "tool_servers",
    __name__,
    url_prefix="/api/tool-servers",
    description="MCP servers whose tools join the workspace's registry as <server>.<tool> (admins)",
)
tools_blp = Blueprint(
    "tools",
    __name__,
    url_prefix="/api/tools",
    description="Every tool the workspace can use: built in, from entry points, from MCP servers",
)


class ToolServerIn(Schema):
    name = fields.String(
        required=True,
        validate=validate.Length(min=1, max=40),
        metadata={"description": "a slug: the tools are named <name>.<tool>"},
    )
    description = fields.String(load_default="", validate=validate.Length(max=2000))
    transport = fields.String(required=True, validate=validate.OneOf(("http", "stdio")))
    url = fields.String(
        load_default="",
        validate=validate.Length(max=2000),
        metadata={"description": "http: the streamable HTTP endpoint, e.g. https://host/mcp"},
    )
    command = fields.List(
        fields.String(validate=validate.Length(min=1, max=1000)),
        load_default=list,
        validate=validate.Length(max=64),
        metadata={"description": "stdio: program and arguments, allowed by COACH_MCP_STDIO_ALLOW"},
    )
    headers = map_of(
        fields.String(validate=validate.Length(max=8000)),
        keys=fields.String(validate=validate.Length(min=1, max=200)),
        metadata={
            "description": "http: sent with every request; stored encrypted, never "
            "returned. Omitted on PUT: kept as they are"
        },
    )
    bearer_token = fields.String(
        validate=validate.Length(max=8000),
        load_only=True,
        metadata={"description": "http: sent as Authorization: Bearer …; stored encrypted"},
    )
    trusted = StrictBoolean(
        load_default=False,
        metadata={
            "description": "take the server's annotations (readOnlyHint …) as the tools' risk; untrusted: every tool "
            "is destructive for the policy"
        },
    )
    enabled = StrictBoolean(load_default=True)
    risk_overrides = map_of(
        fields.String(validate=validate.OneOf(RISKS)),
        keys=fields.String(validate=validate.Length(min=1, max=200)),
        load_default=dict,
        metadata={"description": "tool name (without the server's) -> risk"},
    )


class ServerToolOut(Schema):
    name = fields.String(required=True)
    full_name = fields.String(required=True)
    description = fields.String(required=True)
    input_schema = ToolSchema(
        allow_none=True, metadata={"description": "a JSON Schema, as the server sent it"}, required=True
    )
    annotations = fields.Dict(
        metadata={"description": "the server's MCP tool annotations, as sent (readOnlyHint …)"}, required=True
    )
    annotated_risk = fields.String(validate=validate.OneOf(RISKS), required=True)
    risk = fields.String(validate=validate.OneOf(RISKS), required=True)
    problem = fields.String(
        allow_none=True, metadata={"description": "why the tool cannot be used (its schema)"}, required=True
    )


class ToolServerOut(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    transport = fields.String(validate=validate.OneOf(("http", "stdio")), required=True)
    url = fields.String(required=True)
    command = fields.List(fields.String(), required=True)
    header_names = fields.List(
        fields.String(), metadata={"description": "the stored headers' names only"}, required=True
    )
    has_secret = StrictBoolean(required=True)
    trusted = StrictBoolean(required=True)
    enabled = StrictBoolean(required=True)
    risk_overrides = map_of(
        fields.String(validate=validate.OneOf(RISKS)),
        metadata={"description": "tool name (without the server's) -> risk"},
        required=True,
    )
    tools = fields.List(fields.Nested(ServerToolOut), required=True)
    listed_at = fields.DateTime(allow_none=True, required=True)
    last_error = fields.String(required=True)
    revision = fields.Integer(required=True)
    created_by = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    updated_at = fields.DateTime(required=True)


class ToolServerList(Schema):
    items = fields.List(fields.Nested(ToolServerOut), required=True)


class RegistryTool(Schema):
    name = fields.String(required=True)
    description = fields.String(required=True)
    risk = fields.String(validate=validate.OneOf(RISKS), required=True)
    params_schema = ToolSchema(required=True)
    source = fields.String(validate=validate.OneOf(("builtin", "entry_point", "mcp")), required=True)
    server = fields.String(allow_none=True, metadata={"description": "mcp: the server's name"}, required=True)
    annotations = fields.Dict(allow_none=True, required=True)
    trusted = StrictBoolean(allow_none=True, required=True)


class RegistryList(Schema):
    items = fields.List(fields.Nested(RegistryTool), required=True)


def _view(row):
    return service.view(row, services().mcp)


@blp.route("")
class ToolServers(MethodView):
    @requires("admin")
    @blp.response(200, ToolServerList)
    def get(self):
        with services().db.read() as session:
            return {"items": [_view(r) for r in service.list_servers(session, workspace_id())]}

    @requires("admin")
    @blp.arguments(ToolServerIn)
    @blp.response(201, ToolServerOut)
    def post(self, data):
        with services().command() as uow:
            return _view(service.create(uow.session, services().mcp, workspace_id(), data, operator()))


@blp.route("/<server_id>")
class ToolServerById(MethodView):
    @requires("admin")
    @blp.response(200, ToolServerOut)
    def get(self, server_id):
        with services().db.read() as session:
            return _view(service.get(session, workspace_id(), server_id))

    @requires("admin")
    @blp.arguments(ToolServerIn)
    @blp.response(200, ToolServerOut)
    def put(self, data, server_id):
        with services().command() as uow:
            return _view(service.replace(uow.session, services().mcp, workspace_id(), server_id, data, operator()))

    @requires("admin")
    @blp.response(204)
    def delete(self, server_id):
        with services().command() as uow:
            service.delete(uow.session, services().mcp, workspace_id(), server_id, operator())


@blp.route("/<server_id>/refresh")
class ToolServerRefresh(MethodView):
    @requires("admin")
    @blp.response(200, ToolServerOut)
    def post(self, server_id):
        """List the server's tools now (the web app's "test"): `last_error` says why when it cannot be reached"""
        svc = services()
        return _view(service.refresh(svc.db, svc.mcp, workspace_id(), server_id, operator()))


@tools_blp.route("")
class Tools(MethodView):
    @tools_blp.response(200, RegistryList)
    def get(self):
        """Every tool the caller's workspace can use, with its params schema, risk and source"""
        registry = tools()
        return {"items": [_tool_view(registry.get(name)) for name in registry.names()]}


def _tool_view(tool) -> dict:
    source = getattr(tool, "source", None)
    if source != "mcp":
        source = "builtin" if is_builtin(tool) else "entry_point"
    server = getattr(tool, "server", None)
    return {
        "name": tool.name,
        "description": tool.description,
        "risk": tool.risk,
        "params_schema": tool.params_schema,
        "source": source,
        "server": getattr(server, "name", None),
        "annotations": getattr(tool, "annotations", None),
        "trusted": getattr(server, "trusted", None) if server is not None else None,
    }
