"""/api/agents (the MCP gateway's agent identities) and `match.agent` in policies, through the Flask test client, on
SQLite and PostgreSQL: admins only, the token once and hashed, revocation, 4xx on bad input, audited."""

from __future__ import annotations

import hashlib

import pytest

from services.models.gateway import AgentIdentity
from tests.conftest import Api, make_user

# an app per module and database (tests/conftest.py SharedApps), with Coach's MCP process (/mcp)
pytestmark = [pytest.mark.shared_app, pytest.mark.mcp_process]

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def as_role(app, services, role: str, workspace: str = "default") -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = (
        f"Bearer {make_user(services, f'{role}-{workspace}@test.local', role, workspace)}"
    )
    return Api(client, services)


def test_admin_creates_lists_and_revokes_an_agent_and_the_token_is_shown_once_and_stored_hashed(api, services):
    made = api.ok("POST", "/api/agents", {"name": "claude-code", "description": "Ada's laptop"}, status=201)
    assert made["token"].startswith("coach_agent_") and made["mcp_path"] == "/mcp" and made["active"] is True
    listed = api.ok("GET", "/api/agents")["items"]
    assert [a["name"] for a in listed] == ["claude-code"] and "token" not in listed[0]
    with services.db.read() as session:
        row = session.get(AgentIdentity, made["id"])
        assert row.token_hash == hashlib.sha256(made["token"].encode()).hexdigest()
        assert made["token"] not in repr(vars(row))
    api.ok("DELETE", f"/api/agents/{made['id']}", status=204)
    revoked = api.ok("GET", "/api/agents")["items"][0]
    assert revoked["active"] is False and revoked["revoked_at"]
    api.ok("DELETE", f"/api/agents/{made['id']}", status=204)  # revoking twice changes nothing
    assert api.ok("GET", "/api/agents")["items"][0]["revoked_at"] == revoked["revoked_at"]
    actions = [e["action"] for e in api.ok("GET", "/api/audit?per_page=50")["items"]]
    assert actions.count("agent_create") == 1 and actions.count("agent_revoke") == 1


@pytest.mark.parametrize("role", ["operator", "lead"])
def test_only_admins_manage_agents(app, services, role):
    someone = as_role(app, services, role)
    assert someone.call("GET", "/api/agents")[0] == 403
    assert someone.call("POST", "/api/agents", {"name": "sneaky"})[0] == 403
    admin = as_role(app, services, "admin")
    made = admin.ok("POST", "/api/agents", {"name": "bot"}, status=201)
    assert someone.call("DELETE", f"/api/agents/{made['id']}")[0] == 403


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "has space"}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "-leading"}, "name"),
        ({"name": 7}, "name"),
        ({"name": "ok", "description": "d" * 2001}, "description"),
    ],
)
def test_a_bad_agent_is_a_422_naming_the_field(api, body, field):
    code, answer = api.call("POST", "/api/agents", body)
    assert code == 422 and field in str(answer["error"]["details"]), answer
    assert api.ok("GET", "/api/agents")["items"] == []


def test_an_active_name_is_unique_but_a_revoked_one_can_be_reused(api):
    first = api.ok("POST", "/api/agents", {"name": "codex"}, status=201)
    code, answer = api.call("POST", "/api/agents", {"name": "codex"})
    assert code == 409 and answer["error"]["details"] == {"name": ["codex"]}
    api.ok("DELETE", f"/api/agents/{first['id']}", status=204)
    api.ok("POST", "/api/agents", {"name": "codex"}, status=201)


def test_another_workspaces_agent_is_404_and_not_listed(app, services, api):
    made = api.ok("POST", "/api/agents", {"name": "mine"}, status=201)
    other = as_role(app, services, "admin", workspace="other")
    assert other.ok("GET", "/api/agents")["items"] == []
    assert other.call("DELETE", f"/api/agents/{made['id']}")[0] == 404
    assert other.call("DELETE", "/api/agents/no-such-id")[0] == 404


def test_mcp_refuses_a_missing_unknown_revoked_or_personal_token_with_401(app, api, admin_token):
    client = app.test_client()
    headers = {"Accept": "application/json, text/event-stream"}
    assert client.post("/mcp", json=INIT, headers=headers).status_code == 401
    for token in ("coach_agent_nope", admin_token, "garbage"):
        answer = client.post("/mcp", json=INIT, headers={**headers, "Authorization": f"Bearer {token}"})
        assert answer.status_code == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")
        assert answer.get_json()["error"]["code"] == "unauthorized"
    made = api.ok("POST", "/api/agents", {"name": "bot"}, status=201)
    assert api.ok("GET", "/api/agents")["items"][0]["last_used_at"] is None
    ok = client.post("/mcp", json=INIT, headers={**headers, "Authorization": f"Bearer {made['token']}"})
    assert ok.status_code == 200 and b"serverInfo" in ok.data
    assert api.ok("GET", "/api/agents")["items"][0]["last_used_at"]  # seen
    get = client.get("/mcp", headers={"Accept": "text/event-stream", "Authorization": f"Bearer {made['token']}"})
    assert get.status_code == 405 and get.headers["Allow"] == "POST"  # stateless: no server stream to open
    elsewhere = client.post(
        "/mcp/elsewhere", json=INIT, headers={**headers, "Authorization": f"Bearer {made['token']}"}
    )
    assert elsewhere.status_code in (404, 405) and b"serverInfo" not in elsewhere.data  # only /mcp is the endpoint
    api.ok("DELETE", f"/api/agents/{made['id']}", status=204)
    assert (
        client.post("/mcp", json=INIT, headers={**headers, "Authorization": f"Bearer {made['token']}"}).status_code
        == 401
    )


def test_a_policy_matches_the_agent_and_the_dry_run_explains_it(api):
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "codex reviews",
            "effect": "require_review",
            "reason": "new agent",
            "match": {"tool": "echo", "agent": ["codex"]},
        },
        status=201,
    )
    api.ok(
        "POST",
        "/api/policies",
        {"name": "any agent may echo", "effect": "allow", "order": 5, "match": {"tool": "echo", "agent": "*"}},
        status=201,
    )
    codex = api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {}, "agent": "codex"})
    assert codex["effect"] == "require_review" and codex["rule"]["name"] == "codex reviews"
    other = api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {}, "agent": "cursor"})
    assert other["effect"] == "allow" and other["rule"]["name"] == "any agent may echo"
    workflow = api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "params": {}})
    assert workflow["default"] is True  # a workflow's call has no agent: neither rule matches
    code, answer = api.call("POST", "/api/policies", {"name": "bad", "effect": "deny", "match": {"agent": []}})
    assert code == 422 and "match.agent" in answer["error"]["details"]
    predicate = api.ok(
        "POST",
        "/api/policies",
        {
            "name": "by predicate",
            "effect": "deny",
            "order": -1,
            "match": {"tool": "echo", "params": "agent == 'rogue'"},
        },
        status=201,
    )
    assert api.ok("POST", "/api/policies/evaluate", {"tool": "echo", "agent": "rogue"})["rule"]["id"] == predicate["id"]
