"""The internal routes between Coach's two processes (docs/design.md "Processes and concurrency models"): the MCP
process's (api/mcp_process.py: the client pool's list / call / forget, the held calls' wake-up) and the web process's
/internal/events (api/mcp_proxy.py). Both want COACH_MCP_TOKEN: 401 without it or with another; a body they cannot
use is a 400 saying what is wrong. The MCP process is the real app on uvicorn in a thread (tests/support/mcp_process.py)
on the test's database; the real project MCP server over stdio is the upstream."""

from __future__ import annotations

import pytest

from tests.support.mcp_servers import stdio_command

SHOP = stdio_command("shop")

pytestmark = pytest.mark.mcp_process

ROUTES = {
    "/internal/toolservers/list": {"server_id": "nope"},
    "/internal/toolservers/call": {"server_id": "nope", "tool": "add", "arguments": {}, "timeout": 5, "meta": {}},
    "/internal/toolservers/forget": {"server_id": "nope"},
    "/internal/wake": {"approval_ids": []},
}


@pytest.fixture
def mcp(app):
    return app.extensions["coach_test_mcp"]


@pytest.fixture
def app(settings):
    from tests.conftest import _close_app, _new_app

    app = _new_app(settings.with_overrides(mcp_stdio_allow=(" ".join(SHOP),), mcp_connect_timeout_s=20.0), mcp=True)
    yield app
    _close_app(app)


def test_the_mcp_process_routes_refuse_a_missing_or_wrong_token(mcp):
    for path, body in ROUTES.items():
        for token in (None, "not-the-token", mcp.settings.mcp_token + "x", mcp.settings.mcp_token[:-1]):
            answer = mcp.post(path, body, token)
            assert answer.status_code == 401, (path, token, answer.text)
            assert answer.json()["error"]["code"] == "unauthorized"


def test_with_the_token_a_body_they_cannot_use_is_a_400_saying_so_and_an_unknown_server_a_404(mcp):
    token = mcp.settings.mcp_token
    assert mcp.post("/internal/toolservers/list", {"server_id": "nope"}, token).status_code == 404
    for body, says in (
        ({"server_id": 3}, "server_id"),
        ({"server_id": "x", "tool": "add", "arguments": [1], "timeout": 5}, "arguments"),
        ({"server_id": "x", "tool": "add", "arguments": {}, "timeout": 0}, "timeout"),
        ({"server_id": "x", "tool": "", "arguments": {}, "timeout": 5}, "tool"),
        ({"server_id": "x", "tool": "add", "arguments": {}, "timeout": 5, "meta": "k"}, "meta"),
    ):
        path = "/internal/toolservers/call" if "tool" in body else "/internal/toolservers/list"
        answer = mcp.post(path, body, token)
        assert answer.status_code == 400 and says in answer.json()["error"]["message"], (body, answer.text)
    assert mcp.post("/internal/wake", {"approval_ids": "a"}, token).status_code == 400
    assert mcp.post("/internal/wake", {"approval_ids": ["a"]}, token).status_code == 200
    assert mcp.post("/internal/toolservers/forget", {"server_id": "nope"}, token).status_code == 200
    assert mcp.post("/internal/toolservers/list", [1, 2], token).status_code == 400


def test_a_call_through_the_route_reaches_the_server_named_by_its_row(api, mcp):
    made = api.ok("POST", "/api/tool-servers", {"name": "shop", "transport": "stdio", "command": SHOP}, status=201)
    token = mcp.settings.mcp_token
    listed = mcp.post("/internal/toolservers/list", {"server_id": made["id"]}, token)
    assert listed.status_code == 200 and "add" in {t["name"] for t in listed.json()["tools"]}
    body = {"server_id": made["id"], "tool": "add", "arguments": {"a": 2, "b": 5}, "timeout": 10, "meta": {}}
    called = mcp.post("/internal/toolservers/call", body, token)
    assert called.status_code == 200 and called.json()["result"]["content"][0]["text"] == "7"
    # a server's failure is a 502 with the message a step shows
    crashed = mcp.post("/internal/toolservers/call", {**body, "tool": "crash", "arguments": {}}, token)
    assert crashed.status_code == 502 and "exited with status 3" in crashed.json()["error"]["message"]


def test_the_web_process_events_route_wants_the_token_and_pushes_what_it_gets(app, mcp):
    web = app.test_client()
    good = {"events": [["approval_pending", {"approval_id": "a1"}, "workspace:w1"]]}
    for headers in ({}, {"Authorization": "Bearer nope"}):
        assert web.post("/internal/events", json=good, headers=headers).status_code == 401
    auth = {"Authorization": f"Bearer {mcp.settings.mcp_token}"}
    for bad in ({"events": "x"}, {"events": [["e", {}]]}, {"events": [[1, {}, "r"]]}, [1]):
        answer = web.post("/internal/events", json=bad, headers=auth)
        assert answer.status_code == 400, (bad, answer.data)
    assert web.get("/internal/events", headers=auth).status_code == 405
    pushed = web.post("/internal/events", json=good, headers=auth)
    assert pushed.status_code == 200 and pushed.get_json() == {"pushed": 1}
