"""The MCP gateway (/mcp) on the real server (`python wsgi.py`, gevent), driven by the official MCP Python SDK 2.x's
`Client` (streamable HTTP, 2026-07-28) as the agent, with the project's own MCP server over stdio as the upstream
(MCPServer, tests/support/mcp_servers.py); the earlier revisions' handshake: test_gateway_mcp1_client.py.
Reviews are decided through the REST API as a lead would in the queue."""

from __future__ import annotations

import asyncio
import time

import pytest
import requests
import socketio

from services.db import Database
from tests.support.gateway_agents import (
    audit_calls,
    call,
    decide,
    in_background,
    make_agent,
    mcp,
    other_workspace_admin,
    pending_gateway,
    text,
)
from tests.support.mcp_servers import server_with_shop, stdio_command

SHOP = stdio_command("shop")
HOLD_S = 4.0


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def server(request, tmp_path_factory):
    rules = [
        ("review lookups", "require_review", "shop.lookup"),
        ("review sums", "require_review", "shop.add"),
        ("review tallies", "require_review", "shop.tally"),
        ("no refunds by bots", "deny", "shop.refund"),
        ("slow is fine", "allow", "shop.slow"),
        ("echo is fine", "allow", "shop.echo_meta"),
        ("crashing is allowed", "allow", "shop.crash"),
    ]
    policies = [
        {"name": name, "effect": effect, "reason": f"{name} (tests)", "match": {"tool": tool, "agent": "*"}}
        for name, effect, tool in rules
    ]
    policies.append(
        {
            "name": "no big sums",
            "effect": "deny",
            "order": -1,
            "reason": "too much",
            "match": {"tool": "shop.add", "agent": "*", "params": "params.a > 1000"},
        }
    )
    with server_with_shop(
        request,
        tmp_path_factory.mktemp("gateway") / "server",
        trusted=True,
        policies=policies,
        env={
            "COACH_GATEWAY_HOLD_S": str(HOLD_S),
            "COACH_GATEWAY_PROGRESS_S": "0.5",
            # longer than a hold: a held call answered within its hold was woken by the decision
            # (made on this server), not found by a look of its own
            "COACH_GATEWAY_POLL_S": "30",
        },
    ) as live:
        yield live


def test_no_unknown_or_revoked_token_is_401_before_any_mcp_traffic(server):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    plain = requests.post(server.url("/mcp"), json=init, headers=headers, timeout=10)
    assert plain.status_code == 401 and plain.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = requests.post(
        server.url("/mcp"),
        json=init,
        timeout=10,
        headers={**headers, "Authorization": "Bearer coach_agent_not-a-real-token"},
    )
    assert wrong.status_code == 401
    user_token = requests.post(
        server.url("/mcp"), json=init, timeout=10, headers={**headers, "Authorization": f"Bearer {server.token}"}
    )
    assert user_token.status_code == 401  # a person's API token is not an agent's
    agent = make_agent(server, "revoked-bot")
    ok = requests.post(
        server.url("/mcp"), json=init, timeout=10, headers={**headers, "Authorization": f"Bearer {agent['token']}"}
    )
    assert ok.status_code == 200, ok.text
    assert server.http.delete(server.url(f"/api/agents/{agent['id']}"), timeout=10).status_code == 204
    gone = requests.post(
        server.url("/mcp"), json=init, timeout=10, headers={**headers, "Authorization": f"Bearer {agent['token']}"}
    )
    assert gone.status_code == 401


def test_tools_list_shows_the_workspace_tools_as_server_dot_tool_with_schemas_and_annotations(server):
    agent = make_agent(server, "lister")

    async def go():
        async with mcp(server, agent["token"]) as session:
            return await session.list_tools()

    tools = {t.name: t for t in asyncio.run(go()).tools}
    assert {"shop.lookup", "shop.add", "shop.refund", "shop.tally"} <= set(tools)
    assert tools["shop.lookup"].input_schema["properties"]["order_id"]["type"] == "string"
    assert tools["shop.lookup"].annotations.read_only_hint is True
    assert tools["shop.add"].annotations.destructive_hint is False
    assert "echo" not in tools and "coach.echo" not in tools  # no built-in is exposed by default


def test_allowed_call_is_forwarded_and_audited_with_its_result_size(server):
    agent = make_agent(server, "allowed-bot")
    result = call(server, agent["token"], "shop.slow", {"seconds": 0.1})
    assert result.is_error is False and text(result) == "slept 0.1"
    meta = call(server, agent["token"], "shop.echo_meta", {})
    print(meta)
    assert "gateway:" in text(meta)  # upstream gets a stable idempotency key
    events = audit_calls(server, "allowed-bot")
    slow = [e for e in events if e["tool"] == "shop.slow"][0]
    assert slow["decision"] == "allow" and slow["who"] == "policy" and slow["arguments"] == {"seconds": 0.1}
    assert slow["result_bytes"] > 0


def test_only_a_retry_of_the_same_call_shares_the_upstreams_idempotency_key(server):
    # #42 item 4: two deliberate identical calls reached the upstream with the same key (one that honours keys would
    # drop the second)
    import json

    agent, other = make_agent(server, "twice-bot"), make_agent(server, "twice-other")

    def upstream_key(token: str, meta: dict | None = None) -> str:
        result = call(server, token, "shop.echo_meta", {}, meta=meta)
        assert result.is_error is False, text(result)
        return json.loads(text(result))["meta"]["idempotencyKey"]

    first, second = upstream_key(agent["token"]), upstream_key(agent["token"])
    assert first.startswith("gateway:") and second.startswith("gateway:") and first != second  # two calls
    mine = {"idempotencyKey": "lookup-A-1001"}
    retried = upstream_key(agent["token"], mine), upstream_key(agent["token"], mine)
    assert retried[0] == retried[1] and retried[0] not in (first, second)  # the agent's key says: a retry
    assert upstream_key(other["token"], mine) != retried[0]  # another identity's key is its own
    assert upstream_key(agent["token"], {"idempotencyKey": "lookup-A-1002"}) != retried[0]
    assert "lookup-A-1001" not in retried[0]  # the agent's own key is not passed on as it is


def test_a_call_without_a_progress_token_is_answered_as_plain_json_one_with_it_as_a_stream(server):
    # nothing can be streamed before the answer of a call that asked for no progress: it comes as one JSON body
    agent = make_agent(server, "plain-bot")
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {agent['token']}",
        "MCP-Protocol-Version": "2025-06-18",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "shop.slow", "arguments": {"seconds": 0}},
    }
    plain = requests.post(server.url("/mcp"), json=body, headers=headers, timeout=10)
    assert plain.status_code == 200 and plain.headers["Content-Type"].startswith("application/json")
    assert plain.json()["id"] == 7 and plain.json()["result"]["content"][0]["text"] == "slept 0.0"
    body["params"]["_meta"] = {"progressToken": "p-1"}
    streamed = requests.post(server.url("/mcp"), json=body, headers=headers, timeout=10)
    assert streamed.status_code == 200 and streamed.headers["Content-Type"].startswith("text/event-stream")
    assert '"slept 0.0"' in streamed.text


def test_denied_call_is_an_error_result_naming_the_rule(server):
    agent = make_agent(server, "denied-bot")
    result = call(server, agent["token"], "shop.refund", {"order_id": "A-1001", "amount": 5})
    assert result.is_error is True
    assert "no refunds by bots" in text(result) and "denied" in text(result)
    assert [e["decision"] for e in audit_calls(server, "denied-bot")] == ["deny"]


def test_bad_arguments_and_unknown_tools_are_error_results(server):
    agent = make_agent(server, "sloppy-bot")
    bad = call(server, agent["token"], "shop.add", {"a": "one"})
    assert bad.is_error is True and "input schema" in text(bad)
    unknown = call(server, agent["token"], "shop.nope", {})
    assert unknown.is_error is True and "Unknown tool" in text(unknown)


def test_arguments_that_are_not_an_object_are_an_invalid_params_error_saying_so(server):
    # #42 item 4: the SDK answered -32602 "Invalid request parameters" with empty data, naming nothing
    agent = make_agent(server, "listy-bot")
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {agent['token']}",
        "MCP-Protocol-Version": "2025-06-18",
    }

    def send(params) -> dict:
        answer = requests.post(
            server.url("/mcp"),
            headers=headers,
            timeout=10,
            json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params},
        )
        assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/json")
        return answer.json()

    listed = send({"name": "shop.add", "arguments": [1, 2]})
    assert listed["id"] == 9 and listed["error"]["code"] == -32602
    assert "arguments must be an object" in listed["error"]["message"] and "an array" in listed["error"]["message"]
    assert listed["error"]["data"] == {
        "field": "params.arguments",
        "expected": "an object",
        "got": "an array",
        "tool": "shop.add",
    }
    assert "not a string" in send({"name": "shop.add", "arguments": "a=1"})["error"]["message"]
    assert send({"name": 7, "arguments": {}})["error"]["data"]["field"] == "params.name"
    assert send([1])["error"]["data"]["field"] == "params"
    # left out, or null: no arguments (the SDK's reading), judged as usual
    left_out = send({"name": "shop.slow"})
    assert left_out["result"]["content"][0]["text"] == "slept 1.0"
    assert audit_calls(server, "listy-bot")[0]["tool"] == "shop.slow"  # nothing else reached the policy


def test_held_call_approved_in_time_returns_the_upstream_result_with_progress_meanwhile(server):
    agent = make_agent(server, "review-bot")
    dashboard = socketio.Client(reconnection=False)
    pushed: list = []
    dashboard.on("tool_call_pending_review", pushed.append)
    dashboard.on("approval_requested", pushed.append)
    dashboard.connect(server.base_url, auth={"token": server.token}, wait_timeout=30)
    assert dashboard.call("join_workspace", {})["ok"] is True
    progress: list = []
    thread, box = in_background(call, server, agent["token"], "shop.lookup", {"order_id": "A-1001"}, progress=progress)
    approval = pending_gateway(server, "shop.lookup", "review-bot")
    assert approval["params"] == {"order_id": "A-1001"} and approval["execution_id"] is None
    assert approval["policy"]["rule"]["name"] == "review lookups"
    time.sleep(1.2)  # a progress notification or two while it waits
    assert decide(server, approval["approval_id"], {"decision": "approve", "comment": "fine"}).status_code == 200
    # the decision wakes the held call: answered at once, not at its next look (COACH_GATEWAY_POLL_S is 30 s here)
    # nor at the last look when its hold ends (HOLD_S, 2.8 s away)
    thread.join(HOLD_S - 1.2 - 0.8)
    assert not thread.is_alive(), "the held call was not woken by its decision"
    result = box["result"]
    assert result.is_error is False and result.structured_content["customer"] == "Ada", result
    assert len(progress) >= 2 and "held for a person's review" in progress[0][2]
    dashboard.disconnect()
    review = [p for p in pushed if p.get("source") == "gateway"][0]  # the queue and the panel hear of it at once
    assert review["agent"] == "review-bot" and review["tool"] == "shop.lookup"
    assert review["approval_id"] == approval["approval_id"] and review["policy"]["rule"]["name"] == "review lookups"
    assert any(p.get("kind") == "gateway" and p.get("approval_id") == approval["approval_id"] for p in pushed)
    decisions = [e["decision"] for e in audit_calls(server, "review-bot")]
    assert decisions == ["approve", "require_review"]  # newest first
    approved = audit_calls(server, "review-bot")[0]
    assert approved["who"] == "admin@live.test" and approved["result_bytes"] > 0


def test_edit_forwards_the_edited_arguments_after_checking_them_against_the_schema(server):
    agent = make_agent(server, "edit-bot")
    thread, box = in_background(call, server, agent["token"], "shop.add", {"a": 2, "b": 2})
    approval = pending_gateway(server, "shop.add", "edit-bot")
    bad = decide(server, approval["approval_id"], {"decision": "edit", "params": {"a": "two", "b": 2}})
    assert bad.status_code == 422 and "params.a" in bad.json()["error"]["details"]
    denied = decide(server, approval["approval_id"], {"decision": "edit", "params": {"a": 5000, "b": 2}})
    assert denied.status_code == 422 and "too much" in denied.json()["error"]["message"]  # the policy, with the agent
    assert (
        decide(
            server,
            approval["approval_id"],
            {"decision": "edit", "params": {"a": 20, "b": 22}, "comment": "use the real amounts"},
        ).status_code
        == 200
    )
    thread.join(30)
    result = box["result"]
    # the agent is told that what ran is not what it asked for, as for an AUTO correction (#42 item 4)
    note, answer = result.content
    assert result.is_error is False and answer.text == "42"
    assert note.text == (
        "A reviewer (admin@live.test) edited the arguments before the call: a: 2 → 20; b: 2 → 22. "
        "Their comment: use the real amounts"
    )
    status = result.meta["io.coach/gateway"]
    assert status["decision"] == "edited" and status["reviewer"] == "admin@live.test"
    assert status["edited_arguments"] == {"a": 20, "b": 22} and status["original_arguments"] == {"a": 2, "b": 2}
    assert [c["field"] for c in status["changes"]] == ["a", "b"]
    edited = audit_calls(server, "edit-bot")[0]
    assert edited["decision"] == "edit" and edited["arguments"] == {"a": 20, "b": 22}
    assert edited["original_arguments"] == {"a": 2, "b": 2}


def test_reject_returns_an_error_result_carrying_the_feedback(server):
    agent = make_agent(server, "reject-bot")
    thread, box = in_background(call, server, agent["token"], "shop.add", {"a": 1, "b": 1})
    approval = pending_gateway(server, "shop.add", "reject-bot")
    assert (
        decide(server, approval["approval_id"], {"decision": "reject", "comment": "ask the customer first"}).status_code
        == 200
    )
    thread.join(30)
    result = box["result"]
    assert result.is_error is True and "ask the customer first" in text(result)
    assert audit_calls(server, "reject-bot")[0]["decision"] == "reject"


def test_revoking_an_identity_ends_its_held_calls_and_deciding_one_is_a_409_saying_why(server):
    # #42 item 4: the review stayed pending and could be approved (200), although the call never ran
    agent = make_agent(server, "fired-bot")
    first = call(server, agent["token"], "shop.tally", {"label": "r1"})  # held, past its hold
    assert first.meta["io.coach/gateway"]["decision"] == "pending_review"
    parked = pending_gateway(server, "shop.tally", "fired-bot")
    thread, box = in_background(call, server, agent["token"], "shop.add", {"a": 1, "b": 2})  # held, waiting
    waiting = pending_gateway(server, "shop.add", "fired-bot")
    assert server.http.delete(server.url(f"/api/agents/{agent['id']}"), timeout=10).status_code == 204
    thread.join(HOLD_S + 10)
    assert not thread.is_alive() and box["result"].is_error is True
    assert box["result"].meta["io.coach/gateway"]["decision"] == "revoked"
    queue = server.http.get(server.url("/api/approvals?status=pending&per_page=100"), timeout=10).json()["items"]
    assert not [a for a in queue if a["agent"] == "fired-bot"]  # out of every queue
    for approval in (parked, waiting):
        refused = decide(server, approval["approval_id"], {"decision": "approve"})
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert "expired" in error["message"] and "fired-bot's identity was revoked" in error["message"]
        assert error["details"]["status"] == "expired"
    ended = [e for e in audit_calls(server, "fired-bot") if e["decision"] == "revoked"]
    assert sorted(e["tool"] for e in ended) == ["shop.add", "shop.tally"]
    assert all(e["who"] == "admin@live.test" and "revoked" in e["reason"] for e in ended)
    expired = server.http.get(server.url("/api/audit?action=approval_expire&per_page=200"), timeout=10).json()
    assert {parked["approval_id"], waiting["approval_id"]} <= {e["target_id"] for e in expired["items"]}
    db = Database(server.database_url)
    try:
        from sqlalchemy import select

        from services.models.gateway import GatewayCall

        with db.read() as session:
            states = session.scalars(select(GatewayCall.state).where(GatewayCall.agent_id == agent["id"])).all()
    finally:
        db.dispose()
    assert sorted(states) == ["cancelled", "cancelled"]


def test_held_call_times_out_then_the_same_call_gets_the_decision_and_runs_once(server):
    agent = make_agent(server, "patient-bot")
    first = call(server, agent["token"], "shop.tally", {"label": "t1"})
    assert first.is_error is True and "held for a person's review" in text(first)
    assert first.meta["io.coach/gateway"]["decision"] == "pending_review"
    approval = pending_gateway(server, "shop.tally", "patient-bot")
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    again = call(server, agent["token"], "shop.tally", {"label": "t1"})
    assert again.is_error is False and text(again) == "1"  # the approved call ran, once
    # delivered: the same call once more is a new call, held for its own review (the first approval ran it once)
    thread, box = in_background(call, server, agent["token"], "shop.tally", {"label": "t1"})
    second = pending_gateway(server, "shop.tally", "patient-bot")
    assert second["approval_id"] != approval["approval_id"]
    assert decide(server, second["approval_id"], {"decision": "approve"}).status_code == 200
    thread.join(30)
    assert text(box["result"]) == "2"


def _gateway_rows(server, approval_id: str, **values) -> list[str]:
    """The states of the held calls of this review, after setting `values` on them when given."""
    from sqlalchemy import select, update

    from services.models.gateway import GatewayCall

    db = Database(server.database_url)
    try:
        if values:
            with db.transaction() as session:
                session.execute(update(GatewayCall).where(GatewayCall.approval_id == approval_id).values(**values))
        with db.read() as session:
            return list(session.scalars(select(GatewayCall.state).where(GatewayCall.approval_id == approval_id)))
    finally:
        db.dispose()


def test_a_retry_while_the_approved_call_is_being_forwarded_hears_that_it_was_approved_and_runs(server):
    # #42 item 4: it was told "held for a person's review … it has not run" (pending_review)
    rule = {
        "name": "running-bot's sleeps are reviewed",
        "effect": "require_review",
        "order": -2,
        "reason": "tests",
        "match": {"tool": "shop.slow", "agent": "running-bot"},
    }
    assert server.http.post(server.url("/api/policies"), json=rule, timeout=10).status_code == 201
    agent = make_agent(server, "running-bot")
    sleep = {"seconds": HOLD_S + 8}  # the upstream takes longer than a hold
    thread, box = in_background(call, server, agent["token"], "shop.slow", sleep)
    approval = pending_gateway(server, "shop.slow", "running-bot")
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    deadline = time.monotonic() + 30
    while _gateway_rows(server, approval["approval_id"]) != ["forwarding"] and time.monotonic() < deadline:
        time.sleep(0.1)  # the waiting request claimed it and is forwarding it now
    progress: list = []
    again = call(server, agent["token"], "shop.slow", sleep, progress=progress)
    assert again.is_error is True and "has not run" not in text(again)
    assert "approved by admin@live.test and is running" in text(again), text(again)
    status = again.meta["io.coach/gateway"]
    assert status["decision"] == "approved_running" and status["reviewer"] == "admin@live.test"
    assert progress and all("approved and is running" in message for _, _, message in progress)
    thread.join(30)
    assert text(box["result"]) == f"slept {sleep['seconds']}"  # the first request got the result: it ran once
    assert [e["decision"] for e in audit_calls(server, "running-bot")] == ["approve", "require_review"]

    # a forwarding claimed a moment ago by a process that died (SIGKILL) before its result was stored: until the
    # interrupted bound Coach cannot know, and it says approved and running (then "cannot tell", tested above)
    first = call(server, agent["token"], "shop.tally", {"label": "run1"})
    assert first.meta["io.coach/gateway"]["decision"] == "pending_review"
    held_review = pending_gateway(server, "shop.tally", "running-bot")
    assert decide(server, held_review["approval_id"], {"decision": "approve"}).status_code == 200
    from services.orm import utcnow

    assert _gateway_rows(server, held_review["approval_id"], state="forwarding", forwarded_at=utcnow()) == [
        "forwarding"
    ]
    retry = call(server, agent["token"], "shop.tally", {"label": "run1"})
    assert retry.meta["io.coach/gateway"]["decision"] == "approved_running", text(retry)


def test_the_same_meta_idempotency_key_gets_the_first_calls_decision(server):
    agent = make_agent(server, "keyed-bot")
    key = {"idempotencyKey": "order-77-refund-check"}
    first = call(server, agent["token"], "shop.tally", {"label": "k1"}, meta=key)
    assert "held for a person's review" in text(first)
    approval = pending_gateway(server, "shop.tally", "keyed-bot")
    assert decide(server, approval["approval_id"], {"decision": "edit", "params": {"label": "k2"}}).status_code == 200
    # the retry's arguments differ (a model rarely repeats itself exactly): the key says it is the same call
    again = call(server, agent["token"], "shop.tally", {"label": "something else"}, meta=key)
    assert again.is_error is False and again.content[-1].text == "1"
    assert "label: 'k1' → 'k2'" in again.content[0].text  # the edit, against the arguments first held


def test_another_workspaces_agent_sees_none_of_these_tools(server):
    token = other_workspace_admin(server)
    agent = make_agent(server, "outsider", token=token)
    listed = server.http.get(server.url("/api/agents"), headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert [a["name"] for a in listed.json()["items"]] == ["outsider"]

    async def go():
        async with mcp(server, agent["token"]) as session:
            return await session.list_tools(), await session.call_tool("shop.slow", {"seconds": 0})

    tools, result = asyncio.run(go())
    assert tools.tools == []
    assert result.is_error is True and "Unknown tool" in text(result)


def test_an_upstream_server_that_crashes_mid_call_answers_the_agent_with_a_clear_error(server):
    agent = make_agent(server, "unlucky-bot")
    crashed = call(server, agent["token"], "shop.crash", {})
    assert crashed.is_error is True and "Coach could not complete the call of shop.crash" in text(crashed)
    assert "exit" in text(crashed) or "closed" in text(crashed), text(crashed)
    assert audit_calls(server, "unlucky-bot")[0]["result_bytes"] > 0
    after = call(server, agent["token"], "shop.slow", {"seconds": 0})  # the server is started again for the next call
    assert after.is_error is False


def test_a_forwarding_cut_by_a_crash_is_never_sent_again_and_the_agent_is_told(server):
    from datetime import timedelta

    from sqlalchemy import update

    from services.models.gateway import GatewayCall
    from services.orm import utcnow

    agent = make_agent(server, "crashed-bot")
    first = call(server, agent["token"], "shop.tally", {"label": "c1"})
    assert "held for a person's review" in text(first)
    approval = pending_gateway(server, "shop.tally", "crashed-bot")
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    # as if a Coach process had claimed it for forwarding and died an hour ago, before the result was stored
    db = Database(server.database_url)
    try:
        with db.transaction() as session:
            session.execute(
                update(GatewayCall)
                .where(GatewayCall.approval_id == approval["approval_id"])
                .values(state="forwarding", forwarded_at=utcnow() - timedelta(hours=1))
            )
    finally:
        db.dispose()
    again = call(server, agent["token"], "shop.tally", {"label": "c1"})
    assert again.is_error is True and "cannot tell whether it ran" in text(again)
    assert audit_calls(server, "crashed-bot")[0]["decision"] == "interrupted"


def test_a_held_call_and_a_forwarding_survive_a_sigkill_of_the_mcp_process(server):
    """The MCP process (asgi.py) is killed (SIGKILL) while a call is held, then while an approved one is being
    forwarded; the web process starts it again. The held call's review is still there and, approved, the retry gets
    the result; the interrupted forwarding is not sent again: its retry hears that it was approved and is running."""
    rule = {
        "name": "cut-bot's sleeps are reviewed",
        "effect": "require_review",
        "order": -3,
        "reason": "tests",
        "match": {"tool": "shop.slow", "agent": "cut-bot"},
    }
    assert server.http.post(server.url("/api/policies"), json=rule, timeout=10).status_code == 201
    agent = make_agent(server, "cut-bot")
    thread, box = in_background(call, server, agent["token"], "shop.tally", {"label": "m1"})
    held = pending_gateway(server, "shop.tally", "cut-bot")
    server.kill_mcp()
    thread.join(30)
    assert "error" in box or box["result"].meta["io.coach/gateway"]["decision"] == "pending_review"
    assert pending_gateway(server, "shop.tally", "cut-bot")["approval_id"] == held["approval_id"]
    assert decide(server, held["approval_id"], {"decision": "approve"}).status_code == 200
    again = call(server, agent["token"], "shop.tally", {"label": "m1"})
    assert again.is_error is False and text(again) == "1", text(again)

    sleep = {"seconds": 60}
    thread, box = in_background(call, server, agent["token"], "shop.slow", sleep)
    slow = pending_gateway(server, "shop.slow", "cut-bot")
    assert decide(server, slow["approval_id"], {"decision": "approve"}).status_code == 200
    deadline = time.monotonic() + 30
    while _gateway_rows(server, slow["approval_id"]) != ["forwarding"] and time.monotonic() < deadline:
        time.sleep(0.1)
    server.kill_mcp()
    thread.join(30)
    assert "error" in box  # the agent's answer was cut with the process that was forwarding its call
    retry = call(server, agent["token"], "shop.slow", sleep)
    assert retry.meta["io.coach/gateway"]["decision"] == "approved_running", text(retry)
    assert _gateway_rows(server, slow["approval_id"]) == ["forwarding"]  # not claimed and sent again
    # newest first: the slow call's review (its forwarding was cut: no result to audit), the tally's forwarding
    # after its approval, the tally's review
    assert [e["decision"] for e in audit_calls(server, "cut-bot")] == ["require_review", "approve", "require_review"]


def test_a_held_call_survives_a_sigkill_of_coach_and_runs_once_after_the_restart(server):
    """Last in this module: the server is killed (SIGKILL) while the agent's call is held, and started again on the
    same database. The review is still in the queue; approved, the agent's retry gets the result, the call ran once."""
    agent = make_agent(server, "durable-bot")
    thread, box = in_background(call, server, agent["token"], "shop.tally", {"label": "d1"})
    approval = pending_gateway(server, "shop.tally", "durable-bot")
    server.kill()
    thread.join(30)
    assert "error" in box  # the agent's connection broke with the server
    server.restart()
    assert pending_gateway(server, "shop.tally", "durable-bot")["approval_id"] == approval["approval_id"]
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    again = call(server, agent["token"], "shop.tally", {"label": "d1"})
    assert again.is_error is False and text(again) == "1"
    decisions = [e["decision"] for e in audit_calls(server, "durable-bot")]
    assert decisions == ["approve", "require_review"]  # one review, one forwarding
