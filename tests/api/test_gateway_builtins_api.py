"""/api/workspace/gateway (the built-in tools a workspace's agents may call through the MCP gateway, as
`coach.<tool>`), through the Flask test client, on SQLite and PostgreSQL: none by default, admins choose, leads read,
an unknown name is a 422 naming it, audited; and what the choice does to the gateway's tool list and to a review."""

from __future__ import annotations

import pytest

from services.gateway import builtins
from tests.api.test_agents_api import as_role

# an app per module and database (tests/conftest.py SharedApps), with Coach's MCP process (/mcp)
pytestmark = [pytest.mark.shared_app, pytest.mark.mcp_process]


@pytest.fixture(autouse=True)
def none_exposed(api):
    yield
    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": []})


def test_none_is_exposed_by_default_and_every_built_in_is_offered_with_its_risk(api):
    got = api.ok("GET", "/api/workspace/gateway")
    assert got["builtin_tools"] == []
    offered = {t["name"]: t for t in got["available"]}
    assert {"noop", "echo", "http.request", "sql.query", "file.read", "file.write", "shell.run"} <= set(offered)
    assert offered["http.request"]["gateway_name"] == "coach.http.request"
    assert offered["shell.run"]["risk"] == "destructive" and offered["echo"]["exposed"] is False


def test_an_admin_exposes_built_ins_and_the_change_is_audited(api):
    got = api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": ["http.request", "echo", "echo"]})
    assert got["builtin_tools"] == ["echo", "http.request"]
    assert {t["name"] for t in got["available"] if t["exposed"]} == {"echo", "http.request"}
    assert api.ok("GET", "/api/workspace/gateway")["builtin_tools"] == ["echo", "http.request"]
    event = [e for e in api.ok("GET", "/api/audit?per_page=50")["items"] if e["action"] == "gateway_builtins"][0]
    assert event["before"] == {"builtin_tools": []} and event["after"] == {"builtin_tools": ["echo", "http.request"]}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"builtin_tools": ["echo", "rm.rf"]}, "rm.rf"),
        ({"builtin_tools": ["coach.echo"]}, "coach.echo"),  # the registry's name, not the agents'
        ({"builtin_tools": "echo"}, "builtin_tools"),
        ({"builtin_tools": [5]}, "builtin_tools"),
        ({}, "builtin_tools"),
    ],
)
def test_a_bad_choice_is_a_422_naming_it_and_changes_nothing(api, body, field):
    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": ["echo"]})
    code, answer = api.call("PUT", "/api/workspace/gateway", body)
    assert code == 422, answer
    assert field in str(answer["error"]), answer
    assert api.ok("GET", "/api/workspace/gateway")["builtin_tools"] == ["echo"]


def test_leads_read_and_only_admins_choose(app, services):
    lead, operator = as_role(app, services, "lead"), as_role(app, services, "operator")
    assert lead.ok("GET", "/api/workspace/gateway")["builtin_tools"] == []
    assert lead.call("PUT", "/api/workspace/gateway", {"builtin_tools": ["echo"]})[0] == 403
    assert operator.call("GET", "/api/workspace/gateway")[0] == 403


def test_the_gateway_lists_exposed_built_ins_as_coach_tools_for_this_workspace_only(api, services):
    api.ok("PUT", "/api/workspace/gateway", {"builtin_tools": ["file.write"]})
    ws = services.default_workspace_id()
    tools = builtins.gateway_tools(services, ws)
    assert set(tools) >= {"coach.file.write"} and "coach.echo" not in tools
    spec = tools["coach.file.write"]
    assert spec.risk == "write" and spec.annotations["destructiveHint"] is False
    assert spec.params_schema["required"] == ["path"]
    items = {t["tool"]: t for t in api.ok("GET", "/api/gateway/tools")["items"]}
    assert items["coach.file.write"]["listed"] is True  # the learning per tool counts it like an MCP tool


def test_a_server_cannot_take_the_coach_namespace(api):
    code, body = api.call(
        "POST", "/api/tool-servers", {"name": "coach", "transport": "http", "url": "https://mcp.example.com/mcp"}
    )
    assert code == 422 and "name" in body["error"]["details"]
