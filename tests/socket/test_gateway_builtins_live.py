"""Coach's built-in tools offered to agents through the MCP gateway (docs/mcp-gateway.md "Built-in tools for agents"),
on the real server, driven by the official MCP Python SDK's client: an admin exposes some, agents list and call them
as `coach.<tool>` through the same policies, reviews and audit as an MCP server's tools."""

from __future__ import annotations

import asyncio

import pytest

from services import workspaces
from services.db import Database
from tests.socket.test_gateway_live import (
    audit_calls,
    call,
    decide,
    in_background,
    make_agent,
    mcp,
    pending_gateway,
    text,
)
from tests.support.mcp_servers import server_with_shop

EXPOSED = ["echo", "file.read", "file.write", "http.request"]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def server(request, tmp_path_factory):
    rules = [
        ("echo is fine", "allow", "coach.echo"),
        ("reading is fine", "allow", "coach.file.read"),
        ("writes are reviewed", "require_review", "coach.file.write"),
        ("requests are fine", "allow", "coach.http.request"),
    ]
    policies = [
        {"name": name, "effect": effect, "reason": f"{name} (tests)", "match": {"tool": tool, "agent": "*"}}
        for name, effect, tool in rules
    ]
    with server_with_shop(
        request,
        tmp_path_factory.mktemp("builtins") / "server",
        trusted=True,
        policies=policies,
        env={"COACH_GATEWAY_HOLD_S": "4"},
    ) as live:
        put = live.http.put(live.url("/api/workspace/gateway"), json={"builtin_tools": EXPOSED}, timeout=10)
        assert put.status_code == 200, put.text
        yield live


def listed(server, token: str) -> dict:
    async def go():
        async with mcp(server, token) as session:
            return await session.list_tools()

    return {t.name: t for t in asyncio.run(go()).tools}


def test_the_listing_shows_the_exposed_built_ins_only_with_their_schemas_and_annotations(server):
    agent = make_agent(server, "builtin-lister")
    tools = listed(server, agent["token"])
    assert {"coach.echo", "coach.file.read", "coach.file.write", "coach.http.request"} <= set(tools)
    assert "shop.lookup" in tools  # beside the MCP servers' tools
    assert not {"coach.shell.run", "coach.sql.query", "coach.noop", "echo", "shell.run"} & set(tools)
    assert tools["coach.echo"].annotations.read_only_hint is True
    assert tools["coach.file.write"].annotations.destructive_hint is False
    assert tools["coach.file.write"].annotations.open_world_hint is False
    assert tools["coach.http.request"].annotations.open_world_hint is True
    assert tools["coach.file.write"].input_schema["required"] == ["path"]
    assert "data folder" in tools["coach.file.write"].description


def test_an_allowed_echo_returns_its_arguments_and_is_audited(server):
    agent = make_agent(server, "echo-bot")
    result = call(server, agent["token"], "coach.echo", {"greeting": "hello", "n": 2})
    assert result.is_error is False
    assert result.structured_content == {"greeting": "hello", "n": 2}
    assert '"greeting":"hello"' in text(result)
    event = audit_calls(server, "echo-bot")[0]
    assert event["tool"] == "coach.echo" and event["decision"] == "allow"
    assert event["rule"]["name"] == "echo is fine" and event["result_bytes"] > 0


def test_a_held_write_runs_once_when_approved_in_the_workspaces_folder(server):
    agent = make_agent(server, "writer-bot")
    arguments = {"path": "notes/agent.txt", "content": "one line\n", "mode": "append"}
    first = call(server, agent["token"], "coach.file.write", arguments)
    assert first.is_error is True and "held for a person's review" in text(first)
    approval = pending_gateway(server, "coach.file.write", "writer-bot")
    assert approval["policy"]["rule"]["name"] == "writes are reviewed" and approval["policy"]["risk"] == "write"
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    again = call(server, agent["token"], "coach.file.write", arguments)
    assert again.is_error is False, text(again)
    read = call(server, agent["token"], "coach.file.read", {"path": "notes/agent.txt"})
    assert read.is_error is False and read.structured_content["content"] == "one line\n"  # appended once
    decisions = [e["decision"] for e in audit_calls(server, "writer-bot") if e["tool"] == "coach.file.write"]
    assert decisions == ["approve", "require_review"]


def test_an_edited_write_is_checked_against_the_built_ins_schema(server):
    agent = make_agent(server, "edited-bot")
    thread, box = in_background(
        call, server, agent["token"], "coach.file.write", {"path": "edited.txt", "content": "draft"}
    )
    approval = pending_gateway(server, "coach.file.write", "edited-bot")
    bad = decide(server, approval["approval_id"], {"decision": "edit", "params": {"content": "no path"}})
    assert bad.status_code == 422 and "path" in bad.text
    final = {"decision": "edit", "params": {"path": "edited.txt", "content": "final"}}
    assert decide(server, approval["approval_id"], final).status_code == 200
    thread.join(30)
    assert box["result"].is_error is False, text(box["result"])
    read = call(server, agent["token"], "coach.file.read", {"path": "edited.txt"})
    assert read.structured_content["content"] == "final"


def test_a_request_to_a_host_the_workspace_refuses_is_an_error_result_naming_the_refusal(server):
    lists = server.http.put(server.url("/api/workspace/outbound"), json={"deny": ["127.0.0.1"]}, timeout=10)
    assert lists.status_code == 200, lists.text
    agent = make_agent(server, "fetch-bot")
    try:
        result = call(server, agent["token"], "coach.http.request", {"url": server.url("/api/health")})
    finally:
        server.http.put(server.url("/api/workspace/outbound"), json={"deny": []}, timeout=10)
    assert result.is_error is True
    assert "coach.http.request" in text(result) and "outbound deny list" in text(result), text(result)
    assert audit_calls(server, "fetch-bot")[0]["decision"] == "allow"


def test_a_built_in_not_exposed_is_an_unknown_tool(server):
    agent = make_agent(server, "shell-bot")
    for name in ("coach.shell.run", "shell.run", "coach.nope"):
        result = call(server, agent["token"], name, {"command": ["true"]})
        assert result.is_error is True and "Unknown tool" in text(result), name
    assert audit_calls(server, "shell-bot") == []


def test_another_workspaces_agent_neither_sees_nor_calls_them(server):
    from services.users import service as users
    from services.users import tokens

    db = Database(server.database_url)
    try:
        with db.transaction() as session:
            ws = workspaces.create(session, "builtins-other", "Other")
            admin = users.create_user(session, "builtins-other@live.test", "other-password-1", "Other admin")
            users.set_role(session, admin, ws, "admin")
            token = tokens.create_token(session, admin, "tests")[1]
    finally:
        db.dispose()
    agent = make_agent(server, "outsider", token=token)
    assert listed(server, agent["token"]) == {}
    result = call(server, agent["token"], "coach.echo", {"x": 1})
    assert result.is_error is True and "Unknown tool" in text(result)
    mine = server.http.get(
        server.url("/api/workspace/gateway"), headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert mine.status_code == 200 and mine.json()["builtin_tools"] == []
