"""MCP servers as tool sources: /api/tool-servers, /api/tools, and workflows calling `<server>.<tool>`.

The servers are the project's own (tests/support/mcp_servers.py, built with the SDK 2.x's MCPServer: 2026-07-28),
over stdio and streamable HTTP on loopback, and a 1.x-era one (tests/support/mcp1_server.py, the SDK 1.x's FastMCP
from .venv-mcp1: the initialize handshake); nothing of Coach's is mocked.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from tests.conftest import Api, make_user
from tests.support.mcp1 import mcp1_has, mcp1_server_command
from tests.support.mcp_servers import HttpMcpServer, stdio_command

SHOP = stdio_command("shop")
BROKEN = stdio_command("broken")
OLD = mcp1_server_command()
needs_mcp1 = pytest.mark.skipif(not mcp1_has("mcp"), reason="no .venv-mcp1 with mcp 1.x (run `make setup-dev`)")


@pytest.fixture
def app(settings):
    from tests.conftest import _close_app, _new_app

    allowed = (" ".join(SHOP), " ".join(BROKEN), " ".join(OLD))
    app = _new_app(
        settings.with_overrides(mcp_stdio_allow=allowed, mcp_call_timeout_s=4.0, mcp_connect_timeout_s=20.0), mcp=True
    )
    yield app
    _close_app(app)


def add_server(api: Api, name: str = "shop", command=None, **extra) -> dict:
    body = {"name": name, "transport": "stdio", "command": command or SHOP, **extra}
    server = api.ok("POST", "/api/tool-servers", body, status=201)
    return api.ok("POST", f"/api/tool-servers/{server['id']}/refresh")


def add_remote(api: Api, remote: HttpMcpServer) -> dict:
    """The HTTP server `remote` added as "remote", listed (its lookup tool offered) and allowed to run: the created
    server."""
    created = api.ok(
        "POST", "/api/tool-servers", {"name": "remote", "transport": "http", "url": remote.url}, status=201
    )
    first = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
    assert "lookup" in {t["name"] for t in first["tools"]}, first["last_error"]
    api.allow("remote.*")
    return created


def run(api: Api, steps: list, timeout: float = 30.0) -> dict:
    wf = api.workflow(steps)
    return api.settle(api.start(wf["id"])["execution_id"], timeout=timeout)


def tool_names(api: Api) -> dict[str, dict]:
    return {t["name"]: t for t in api.ok("GET", "/api/tools")["items"]}


def test_stdio_server_tools_join_the_registry_with_schema_risk_and_source(api):
    server = add_server(api)
    assert server["last_error"] == "" and server["listed_at"]
    assert {"lookup", "add", "refund", "fail", "crash", "hang", "toggle_beta"} <= {t["name"] for t in server["tools"]}
    tools = tool_names(api)
    lookup = tools["shop.lookup"]
    assert lookup["source"] == "mcp" and lookup["server"] == "shop"
    assert lookup["params_schema"]["properties"]["order_id"]["type"] == "string"
    # not trusted: the annotations (readOnlyHint) are hints only, the tool is destructive for the policy
    assert lookup["risk"] == "destructive"
    assert tools["echo"]["source"] == "builtin"


def test_trusted_server_takes_annotations_and_unannotated_tools_are_destructive(api):
    server = add_server(api, trusted=True, risk_overrides={"add": "read"})
    risks = {t["name"]: t["risk"] for t in server["tools"]}
    assert risks["lookup"] == "read"  # readOnlyHint
    assert risks["refund"] == "destructive"  # no annotations: the protocol's defaults
    assert risks["add"] == "read"  # the admin's override wins
    assert tool_names(api)["shop.lookup"]["risk"] == "read"


def test_action_step_gets_structured_output_and_text(api):
    add_server(api)
    api.allow("shop.*")
    ex = run(
        api,
        [
            {"id": "find", "tool": "shop.lookup", "params": {"order_id": "A-1001"}},
            {"id": "sum", "tool": "shop.add", "params": {"a": 2, "b": 3}},
            {"id": "check", "type": "validation", "condition": "steps.find.output.structured.total > 100"},
        ],
    )
    assert ex["status"] == "completed", ex
    steps = {s["step_id"]: s for s in ex["steps"]}
    assert steps["find"]["output"]["structured"]["customer"] == "Ada"
    assert steps["sum"]["output"]["text"] == "5"


def test_is_error_fails_the_step_with_the_servers_message(api):
    add_server(api)
    api.allow("shop.*")
    ex = run(api, [{"id": "f", "tool": "shop.fail", "params": {"message": "no such refund"}}])
    assert ex["status"] == "failed"
    step = ex["steps"][0]
    assert "no such refund" in step["error"] and "shop.fail reported an error" in step["error"]


def test_unknown_tool_and_bad_params_are_422(api):
    add_server(api)
    code, body = api.call("POST", "/api/workflows", {"name": "x", "steps": [{"id": "a", "tool": "shop.nope"}]})
    assert code == 422 and "steps[0].tool" in body["error"]["details"]
    code, body = api.call(
        "POST",
        "/api/workflows",
        {
            "name": "x",
            "steps": [
                {"id": "a", "tool": "shop.refund", "params": {"order_id": "A-1", "amount": 5, "reason": "bored"}}
            ],
        },
    )
    assert code == 422 and any(k.startswith("steps[0].params") for k in body["error"]["details"])


def test_crashing_server_fails_the_step_clearly_and_is_restarted(api):
    add_server(api)
    api.allow("shop.*")
    ex = run(api, [{"id": "boom", "tool": "shop.crash"}])
    assert ex["status"] == "failed"
    # seen as a crash ("closed the connection", "exited"), not waited out as a call that did not answer
    assert "closed the connection" in ex["steps"][0]["error"] and "exited with status 3" in ex["steps"][0]["error"]
    assert "did not answer" not in ex["steps"][0]["error"]
    again = run(api, [{"id": "sum", "tool": "shop.add", "params": {"a": 1, "b": 1}}])
    assert again["status"] == "completed" and again["steps"][0]["output"]["text"] == "2"


def test_hanging_server_times_out_and_the_next_call_works(api):
    add_server(api)
    api.allow("shop.*")
    started = time.monotonic()
    ex = run(api, [{"id": "h", "tool": "shop.hang", "params": {"seconds": 120}}])
    took = time.monotonic() - started
    assert ex["status"] == "failed"
    assert "did not answer hang within" in ex["steps"][0]["error"] and "cancelled" in ex["steps"][0]["error"]
    assert took < 120  # given up at the call's timeout, long before the tool would answer
    again = run(api, [{"id": "sum", "tool": "shop.add", "params": {"a": 1, "b": 2}}])
    assert again["status"] == "completed", again


def test_list_changed_updates_the_registry_and_a_vanished_tool_fails(api):
    add_server(api)
    api.allow("shop.*")
    assert "shop.beta" not in tool_names(api)
    run(api, [{"id": "t", "tool": "shop.toggle_beta"}])
    deadline = time.monotonic() + 30
    while "shop.beta" not in tool_names(api) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "shop.beta" in tool_names(api)
    wf = api.workflow([{"id": "b", "tool": "shop.beta"}], name="uses beta")
    run(api, [{"id": "t", "tool": "shop.toggle_beta"}])  # beta goes away
    deadline = time.monotonic() + 30
    while "shop.beta" in tool_names(api) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "shop.beta" not in tool_names(api)
    code, body = api.call("POST", "/api/workflows", {"name": "x", "steps": [{"id": "b", "tool": "shop.beta"}]})
    assert code == 422 and "unknown tool 'shop.beta'" in body["error"]["details"]["steps[0].tool"][0]
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "failed" and "shop.beta" in ex["steps"][0]["error"]


@needs_mcp1
def test_a_1x_era_server_over_stdio_gets_the_handshake_and_its_list_changes_are_heard(api):
    # Coach's client probes server/discover; a server of the earlier revisions refuses it and gets initialize
    server = add_server(api, name="old", command=OLD)
    assert server["last_error"] == "" and {"lookup", "add", "toggle_beta"} <= {t["name"] for t in server["tools"]}
    assert tool_names(api)["old.lookup"]["risk"] == "destructive"  # untrusted: its readOnlyHint is a hint only
    api.allow("old.*")
    ex = run(
        api,
        [
            {"id": "find", "tool": "old.lookup", "params": {"order_id": "A-7"}},
            {"id": "sum", "tool": "old.add", "params": {"a": 2, "b": 3}},
            {"id": "t", "tool": "old.toggle_beta"},
        ],
    )
    assert ex["status"] == "completed", ex
    assert ex["steps"][0]["output"]["structured"]["customer"] == "Ada" and ex["steps"][1]["output"]["text"] == "5"
    # notifications/tools/list_changed on the handshake-era session (a 2026-07-28 server's comes on a listen stream:
    # test_list_changed_updates_the_registry_and_a_vanished_tool_fails)
    deadline = time.monotonic() + 30
    while "old.beta" not in tool_names(api) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "old.beta" in tool_names(api)


@needs_mcp1
def test_a_1x_era_server_over_streamable_http_gets_the_handshake(api, tmp_path):
    with HttpMcpServer(tmp_path / "mcp1", name="old", command=OLD) as old:
        created = api.ok(
            "POST", "/api/tool-servers", {"name": "remote", "transport": "http", "url": old.url}, status=201
        )
        listed = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
        assert listed["last_error"] == "" and "lookup" in {t["name"] for t in listed["tools"]}, listed["last_error"]
        api.allow("remote.*")
        ex = run(
            api,
            [
                {"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-8"}},
                {"id": "sum", "tool": "remote.add", "params": {"a": 20, "b": 22}},
            ],
        )
        assert ex["status"] == "completed", ex
        assert ex["steps"][0]["output"]["structured"]["order_id"] == "A-8" and ex["steps"][1]["output"]["text"] == "42"


def test_invalid_schema_is_reported_and_the_tool_is_not_offered(api):
    server = add_server(api, name="broken", command=BROKEN)
    tools = {t["name"]: t for t in server["tools"]}
    assert "not a valid JSON Schema" in tools["bad"]["problem"]
    names = tool_names(api)
    assert "broken.ok" in names and "broken.bad" not in names


def test_policy_requires_review_for_the_servers_tools(api):
    add_server(api, trusted=True)
    api.ok(
        "POST",
        "/api/policies",
        {"name": "shop needs review", "effect": "require_review", "order": 0, "match": {"tool": "shop.*"}},
        status=201,
    )
    verdict = api.ok("POST", "/api/policies/evaluate", {"tool": "shop.lookup", "params": {"order_id": "A-1001"}})
    assert verdict["effect"] == "require_review" and verdict["risk"] == "read"
    wf = api.workflow([{"id": "find", "tool": "shop.lookup", "params": {"order_id": "A-1001"}}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval"


def test_coaching_suggestion_carries_the_mcp_schema_for_the_correction_editor(api):
    add_server(api, trusted=True)
    wf = api.workflow([{"id": "r", "tool": "shop.refund", "params": {"order_id": "A-1002", "amount": 10}}])
    ex = api.start(wf["id"], mode="coaching")
    api.settle(ex["execution_id"])
    suggestion = api.ok("GET", f"/api/executions/{ex['execution_id']}/coaching/suggestion")["suggestion"]
    schema = suggestion["params_schema"]
    assert schema["properties"]["reason"]["enum"] == ["damaged", "lost", "late"]
    assert schema["properties"]["amount"]["type"] == "number"
    bad = api.call(
        "POST",
        f"/api/executions/{ex['execution_id']}/coaching/decision",
        {
            "suggestion_id": suggestion["suggestion_id"],
            "decision": "correct",
            "correction": {"order_id": "A-1002", "amount": 10, "reason": "bored"},
        },
    )
    assert bad[0] == 422
    api.ok(
        "POST",
        f"/api/executions/{ex['execution_id']}/coaching/decision",
        {
            "suggestion_id": suggestion["suggestion_id"],
            "decision": "correct",
            "correction": {"order_id": "A-1002", "amount": 7.5, "reason": "lost"},
        },
    )
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed"
    # refund answers in text (no outputSchema): the step's output holds the text and the content blocks
    assert json.loads(done["steps"][0]["output"]["text"]) == {"order_id": "A-1002", "refunded": 7.5, "reason": "lost"}


def test_tools_of_one_workspace_are_invisible_to_another(api, app, services):
    server = add_server(api)
    other = app.test_client()
    other.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'boss@other.test', 'admin', 'other')}"
    them = Api(other, services)
    assert not any(t["name"].startswith("shop.") for t in them.ok("GET", "/api/tools")["items"])
    assert them.call("GET", f"/api/tool-servers/{server['id']}")[0] == 404
    assert them.call("POST", f"/api/tool-servers/{server['id']}/refresh")[0] == 404
    assert them.call("DELETE", f"/api/tool-servers/{server['id']}")[0] == 404
    assert them.ok("GET", "/api/tool-servers")["items"] == []
    code, body = them.call("POST", "/api/workflows", {"name": "x", "steps": [{"id": "a", "tool": "shop.lookup"}]})
    assert code == 422
    # the same name in the other workspace is its own server
    them.ok("POST", "/api/tool-servers", {"name": "shop", "transport": "stdio", "command": SHOP}, status=201)


def test_stdio_commands_must_be_allowed_and_fields_are_checked(api):
    code, body = api.call(
        "POST",
        "/api/tool-servers",
        {"name": "evil", "transport": "stdio", "command": [sys.executable, "-c", "print(1)"]},
    )
    assert code == 422 and "command" in body["error"]["details"]
    code, body = api.call(
        "POST", "/api/tool-servers", {"name": "Bad Name", "transport": "http", "url": "http://127.0.0.1:1/mcp"}
    )
    assert code == 422 and "name" in body["error"]["details"]
    code, body = api.call("POST", "/api/tool-servers", {"name": "web", "transport": "http", "url": "ftp://x"})
    assert code == 422 and "url" in body["error"]["details"]
    code, body = api.call("POST", "/api/tool-servers", {"name": "http", "transport": "http", "url": "http://x/mcp"})
    assert code == 422 and "name" in body["error"]["details"]
    add_server(api)
    code, _ = api.call("POST", "/api/tool-servers", {"name": "shop", "transport": "stdio", "command": SHOP})
    assert code == 409


def test_http_server_with_bearer_token_stored_encrypted_and_never_returned(api, services, tmp_path):
    from services.models.toolservers import ToolServer

    with HttpMcpServer(tmp_path / "mcp", name="remote") as remote:
        created = api.ok(
            "POST",
            "/api/tool-servers",
            {
                "name": "remote",
                "transport": "http",
                "url": remote.url,
                "bearer_token": "s3cret-token",
                "headers": {"X-Team": "a"},
            },
            status=201,
        )
        assert "bearer_token" not in created and "headers" not in created
        assert created["header_names"] == ["Authorization", "X-Team"] and created["has_secret"]
        with services.db.read() as session:
            stored = session.get(ToolServer, created["id"]).secret
        assert "s3cret" not in stored and stored
        listed = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
        assert listed["last_error"] == "" and "lookup" in {t["name"] for t in listed["tools"]}
        api.allow("remote.*")
        ex = run(
            api,
            [
                {"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}},
                {"id": "meta", "tool": "remote.echo_meta"},
            ],
        )
        assert ex["status"] == "completed", ex
        assert ex["steps"][0]["output"]["structured"]["status"] == "lost"
        assert "idempotencyKey" in ex["steps"][1]["output"]["text"]
        # PUT without headers keeps them; the audit trail holds the names only
        body = {"name": "remote", "transport": "http", "url": remote.url, "trusted": True}
        assert api.ok("PUT", f"/api/tool-servers/{created['id']}", body)["header_names"] == ["Authorization", "X-Team"]
    events = api.ok("GET", "/api/audit")["items"]
    assert {"tool_server_create", "tool_server_refresh", "tool_server_update"} <= {e["action"] for e in events}
    assert "s3cret" not in str(events)
    gone = run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])
    assert gone["status"] == "failed" and "remote" in gone["steps"][0]["error"]
    api.ok("DELETE", f"/api/tool-servers/{created['id']}", status=204)
    assert "remote.lookup" not in tool_names(api)


def test_an_http_server_is_held_to_the_workspaces_outbound_rules(api, tmp_path):
    """An MCP server's URL is an outbound connection like http.request's: the workspace's deny list (and the
    server's COACH_OUTBOUND_ALLOW for private addresses) refuse it, naming why, at once and on a later call."""
    with HttpMcpServer(tmp_path / "mcp", name="remote") as remote:
        created = add_remote(api, remote)
        api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.1"]})
        refused = run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])
        assert refused["status"] == "failed"
        assert "outbound deny list" in refused["steps"][0]["error"], refused["steps"][0]["error"]
        listed = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
        assert "outbound deny list" in listed["last_error"]
        api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": []})
        again = run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])
        assert again["status"] == "completed", again


def test_a_loopback_server_needs_the_servers_allowance(settings, tmp_path):
    """Without COACH_OUTBOUND_ALLOW naming it (the default), a loopback MCP server is refused like any private
    address: a workspace cannot reach the machine's own services through a tool server."""
    from tests.conftest import Api, _close_app, _new_app, make_user

    app = _new_app(settings.with_overrides(outbound_allow=(), mcp_connect_timeout_s=20.0), mcp=True)
    try:
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_user(
            app.extensions["coach"], "a@test.local", "admin"
        )
        api = Api(client, app.extensions["coach"])
        with HttpMcpServer(tmp_path / "mcp", name="inside") as inside:
            created = api.ok(
                "POST", "/api/tool-servers", {"name": "inside", "transport": "http", "url": inside.url}, status=201
            )
            listed = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
            assert "loopback" in listed["last_error"] and "COACH_OUTBOUND_ALLOW" in listed["last_error"]
            assert listed["tools"] == []
    finally:
        _close_app(app)


def test_refreshing_an_already_used_server_whose_host_is_now_denied_says_so_at_once(api, tmp_path):
    """The probe's finding: once a workspace denies the host of an HTTP server it has already listed, "refresh"
    answered only after the call timeout, blaming a timeout. The refusal is known before anything is sent."""
    with HttpMcpServer(tmp_path / "mcp", name="remote") as remote:
        created = add_remote(api, remote)
        used = run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])
        assert used["status"] == "completed", used  # the server's session is open and in use
        api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.1"]})
        listed = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
        # refused for the deny list, not after waiting out the call's timeout (no wall-clock bound: a loaded machine
        # may take seconds for what is instant here; the reason says which it was)
        assert "outbound deny list" in listed["last_error"] and "127.0.0.1" in listed["last_error"], listed
        assert "within" not in listed["last_error"]  # not blamed on a timeout
        assert "lookup" in {t["name"] for t in listed["tools"]}  # the last listing is kept
        api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": []})
        again = api.ok("POST", f"/api/tool-servers/{created['id']}/refresh")
        assert again["last_error"] == "" and "lookup" in {t["name"] for t in again["tools"]}
        # a call on a session in use is refused at once too
        assert (
            run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])["status"]
            == "completed"
        )
        api.ok("PUT", "/api/workspace/outbound", {"allow": [], "deny": ["127.0.0.1"]})
        started = time.monotonic()
        refused = run(api, [{"id": "find", "tool": "remote.lookup", "params": {"order_id": "A-1002"}}])
        assert time.monotonic() - started < 3.0
        error = refused["steps"][0]["error"]
        assert "outbound deny list" in error and "127.0.0.1" in error and "within" not in error, error
