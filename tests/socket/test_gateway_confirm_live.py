"""A policy rule's `confirm` effect (#42 item 2): the gateway asks *the person at the agent* about a call, in the
protocol, on the real server (`python wsgi.py`, gevent) with the project's own MCP server over stdio upstream.

- 2026-07-28: the official SDK 2.x `Client` with an elicitation callback (its user) gets an InputRequiredResult,
  answers it and retries with inputResponses and the sealed requestState (the SDK's client drives that);
- the earlier revisions: the same Client in mode='legacy', and the pinned SDK 1.x's ClientSession
  (tests/support/mcp1_agent.py, from .venv-mcp1) answer a server-initiated elicitation/create;
- a client that declares no elicitation gets the rule's fallback (a Coach review, or a deny);
- a tampered requestState is refused, saying so; a replayed answer does not run the call again;
- the answers count as decisions per tool x identity (GET /api/gateway/tools) and are audited (gateway_confirm).
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from tests.support.gateway_agents import (
    audit_calls,
    call,
    decide,
    in_background,
    make_agent,
    mcp,
    pending_gateway,
    text,
)
from tests.support.live_server import REPO_ROOT
from tests.support.mcp1 import MCP1_PYTHON, mcp1_has
from tests.support.mcp_servers import server_with_shop

HOLD_S = 4.0
CONFIRM_S = 8.0  # the person's time to answer (and a 2026-07-28 question's lifetime)
MCP1_AGENT = REPO_ROOT / "tests" / "support" / "mcp1_agent.py"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def server(request, tmp_path_factory):
    policies = [
        {
            "name": "ask about sums",
            "effect": "confirm",
            "reason": "sums are the user's call",
            "match": {"tool": "shop.add", "agent": "*"},
        },
        {
            "name": "ask about tallies, else deny",
            "effect": "confirm",
            "fallback": "deny",
            "reason": "tallies are the user's call",
            "match": {"tool": "shop.tally", "agent": "*"},
        },
        {
            "name": "no huge sums",
            "effect": "deny",
            "order": -1,
            "reason": "too much",
            "match": {"tool": "shop.add", "agent": "*", "params": "params.a > 1000"},
        },
    ]
    with server_with_shop(
        request,
        tmp_path_factory.mktemp("gateway-confirm") / "server",
        trusted=True,
        policies=policies,
        env={
            "COACH_GATEWAY_HOLD_S": str(HOLD_S),
            "COACH_GATEWAY_PROGRESS_S": "0.5",
            "COACH_GATEWAY_CONFIRM_S": str(CONFIRM_S),
        },
    ) as live:
        yield live


def answering(*replies: types.ElicitResult, asked: list | None = None):
    """An elicitation callback: the user's answers, in order; what it was asked is appended to `asked`."""
    queue = list(replies)

    async def callback(context, params):
        if asked is not None:
            asked.append(params)
        return queue.pop(0)

    return callback


def confirm_call(server, token, tool, arguments, *replies, mode="auto", asked=None, progress=None, delay_s=0.0):
    """One tools/call whose client's user answers `replies` (after `delay_s`); progress notifications appended to
    `progress` when given."""
    callback = answering(*replies, asked=asked)

    async def slow(context, params):
        await asyncio.sleep(delay_s)
        return await callback(context, params)

    async def on_progress(done, total, message):
        progress.append(message)

    async def go():
        async with mcp(server, token, mode, elicitation_callback=slow if delay_s else callback) as client:
            return await client.call_tool(
                tool, arguments, progress_callback=on_progress if progress is not None else None
            )

    return asyncio.run(go())


def tools_view(server) -> dict:
    listed = server.http.get(server.url("/api/gateway/tools"), timeout=10)
    assert listed.status_code == 200, listed.text
    return {item["tool"]: item for item in listed.json()["items"]}


def confirm_audits(server, agent: str) -> list[dict]:
    page = server.http.get(server.url("/api/audit?action=gateway_confirm&per_page=200"), timeout=10).json()
    return [e for e in page["items"] if (e.get("after") or {}).get("identity") == agent]


def test_on_2026_07_28_the_user_is_asked_and_an_accept_runs_the_call(server):
    agent = make_agent(server, "confirm-modern")
    asked: list = []
    result = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 2, "b": 3},
        types.ElicitResult(action="accept", content={"coach_decision": "run"}),
        asked=asked,
    )
    assert result.is_error is False and text(result) == "5"
    assert result.meta["io.coach/gateway"]["decision"] == "confirmed_at_agent"
    [question] = asked
    assert "confirm-modern wants to call shop.add" in question.message and '"a": 2' in question.message
    assert "ask about sums" in question.message
    schema = question.requested_schema
    assert schema["properties"]["coach_decision"]["enum"] == ["run", "do not run"]
    assert schema["properties"]["b"] == {**schema["properties"]["b"], "type": "integer", "default": 3}
    decisions = [e["decision"] for e in audit_calls(server, "confirm-modern")]
    assert decisions == ["confirm_accept", "confirm"]  # newest first
    [answer] = confirm_audits(server, "confirm-modern")
    assert answer["after"]["answer"] == "accept" and answer["after"]["era"] == "input_required"
    assert answer["actor"] == "agent:confirm-modern"
    counted = tools_view(server)["shop.add"]["agents"]["confirm-modern"]
    assert counted["decisions"] == 1 and counted["accepted"] == 1
    assert counted["at_agent"]["decisions"] == 1


def test_an_edit_runs_the_edited_arguments_and_the_agent_is_told(server):
    agent = make_agent(server, "confirm-editor")
    result = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 2, "b": 3},
        types.ElicitResult(action="accept", content={"coach_decision": "run", "b": 30, "coach_reason": "thirty"}),
    )
    assert result.is_error is False
    assert text(result).endswith("32")
    assert "edited the arguments before the call: b: 3 → 30" in text(result) and "thirty" in text(result)
    status = result.meta["io.coach/gateway"]
    assert status["decision"] == "edited_at_agent" and status["edited_arguments"] == {"a": 2, "b": 30}
    assert status["changes"] == [{"field": "b", "before": 3, "after": 30}]
    counted = tools_view(server)["shop.add"]["agents"]["confirm-editor"]
    assert counted["corrected"] == 1 and counted["at_agent"]["corrected"] == 1
    [edit] = [e for e in audit_calls(server, "confirm-editor") if e["decision"] == "confirm_edit"]
    assert edit["arguments"] == {"a": 2, "b": 30} and edit["original_arguments"] == {"a": 2, "b": 3}


def test_a_decline_with_a_reason_reaches_the_agent_and_counts_as_a_reject(server):
    agent = make_agent(server, "confirm-decliner")
    result = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 1, "b": 1},
        types.ElicitResult(action="accept", content={"coach_decision": "do not run", "coach_reason": "not today"}),
    )
    assert result.is_error is True
    assert "declined this call of shop.add" in text(result) and "not today" in text(result)
    assert result.meta["io.coach/gateway"]["decision"] == "declined_at_agent"
    # the client's own decline button: no reason
    plain = confirm_call(server, agent["token"], "shop.add", {"a": 1, "b": 2}, types.ElicitResult(action="decline"))
    assert plain.is_error is True and "gave no reason" in text(plain)
    # dismissed: no decision
    gone = confirm_call(server, agent["token"], "shop.add", {"a": 1, "b": 3}, types.ElicitResult(action="cancel"))
    assert gone.is_error is True and "dismissed" in text(gone)
    counted = tools_view(server)["shop.add"]["agents"]["confirm-decliner"]
    assert counted["rejected"] == 2 and counted["decisions"] == 2
    answers = sorted(e["after"]["answer"] for e in confirm_audits(server, "confirm-decliner"))
    assert answers == ["cancel", "decline", "decline"]


def test_policies_still_win_a_deny_rule_denies_before_anyone_is_asked(server):
    agent = make_agent(server, "confirm-denied")
    asked: list = []
    result = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 5000, "b": 1},
        types.ElicitResult(action="accept", content={"coach_decision": "run"}),
        asked=asked,
    )
    assert result.is_error is True and "no huge sums" in text(result)
    assert asked == []
    # an edit into what a deny rule matches is denied: the rules of now judge what would run
    edited = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 5, "b": 1},
        types.ElicitResult(action="accept", content={"coach_decision": "run", "a": 5001}),
    )
    assert edited.is_error is True and "no huge sums" in text(edited)


def test_a_client_without_elicitation_gets_the_rules_fallback(server):
    agent = make_agent(server, "confirm-mute")
    # fallback require_review (the default): held for a Coach reviewer, as any held call
    thread, box = in_background(call, server, agent["token"], "shop.add", {"a": 4, "b": 4})
    approval = pending_gateway(server, "shop.add", "confirm-mute")
    assert approval["params"] == {"a": 4, "b": 4}
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    thread.join(60)
    assert "error" not in box, box.get("error")
    assert box["result"].is_error is False and text(box["result"]) == "8"
    held = [e for e in audit_calls(server, "confirm-mute") if e["decision"] == "require_review"]
    assert held and "declared no elicitation" in held[0]["confirm_fallback"]
    # fallback deny
    denied = call(server, agent["token"], "shop.tally", {"label": "mute"})
    assert denied.is_error is True and "ask about tallies" in text(denied) and "fallback" in text(denied)


def test_a_tampered_request_state_is_refused_and_an_answer_runs_the_call_once(server):
    agent = make_agent(server, "confirm-tamper")

    async def go():
        async with mcp(server, agent["token"], elicitation_callback=answering()) as client:
            first = await client.session.call_tool("shop.tally", {"label": "t1"}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            assert list(first.input_requests) == ["coach_confirm"] and first.request_state
            yes = {"coach_confirm": types.ElicitResult(action="accept", content={"coach_decision": "run"})}
            state = first.request_state
            tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "shop.tally", {"label": "t1"}, input_responses=yes, request_state=tampered
                )
            # the state is bound to the call's arguments too
            with pytest.raises(MCPError) as other_args:
                await client.session.call_tool("shop.tally", {"label": "t2"}, input_responses=yes, request_state=state)
            ran = await client.session.call_tool(
                "shop.tally", {"label": "t1"}, input_responses=yes, request_state=state
            )
            again = await client.session.call_tool(
                "shop.tally", {"label": "t1"}, input_responses=yes, request_state=state
            )
            return refused.value, other_args.value, ran, again

    refused, other_args, ran, again = asyncio.run(go())
    assert refused.code == types.INVALID_PARAMS and "refused this call's requestState" in refused.message
    assert refused.data["field"] == "params.requestState"
    assert other_args.code == types.INVALID_PARAMS and "requestState" in other_args.message
    assert ran.is_error is False and text(ran) == "1"
    assert again.is_error is True and "already answered" in text(again)  # a replay does not run it again


def test_another_identity_cannot_use_an_agents_request_state(server):
    agent, other = make_agent(server, "confirm-owner"), make_agent(server, "confirm-thief")

    async def ask():
        async with mcp(server, agent["token"], elicitation_callback=answering()) as client:
            return await client.session.call_tool("shop.tally", {"label": "own"}, allow_input_required=True)

    first = asyncio.run(ask())

    async def steal():
        async with mcp(server, other["token"], elicitation_callback=answering()) as client:
            yes = {"coach_confirm": types.ElicitResult(action="accept", content={"coach_decision": "run"})}
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "shop.tally", {"label": "own"}, input_responses=yes, request_state=first.request_state
                )
            return refused.value

    assert "requestState" in asyncio.run(steal()).message


def test_the_2x_client_in_legacy_mode_answers_an_elicitation_create(server):
    agent = make_agent(server, "confirm-legacy")
    asked: list = []
    result = confirm_call(
        server,
        agent["token"],
        "shop.add",
        {"a": 6, "b": 7},
        types.ElicitResult(action="accept", content={"coach_decision": "run", "a": 60}),
        mode="legacy",
        asked=asked,
    )
    assert result.is_error is False and text(result).endswith("67")
    assert asked and "confirm-legacy wants to call shop.add" in asked[0].message
    [answer] = confirm_audits(server, "confirm-legacy")
    assert answer["after"]["answer"] == "edit" and answer["after"]["era"] == "elicitation/create"
    # without elicitation in legacy mode: the fallback (here deny)
    denied = call(server, agent["token"], "shop.tally", {"label": "legacy"}, mode="legacy")
    assert denied.is_error is True and "fallback" in text(denied)


@pytest.mark.skipif(not mcp1_has("mcp"), reason="no .venv-mcp1 with mcp 1.x (run `make setup-dev`)")
def test_the_pinned_1x_client_answers_an_elicitation_create(server):
    agent = make_agent(server, "confirm-mcp1")
    steps = [
        ["call", "shop.add", {"a": 1, "b": 2}, False, {"action": "accept", "content": {"coach_decision": "run"}}],
        [
            "call",
            "shop.add",
            {"a": 3, "b": 4},
            False,
            {"action": "accept", "content": {"coach_decision": "do not run", "coach_reason": "no"}},
        ],
    ]
    done = subprocess.run(
        [str(MCP1_PYTHON), str(MCP1_AGENT), server.url("/mcp"), agent["token"]],
        input=json.dumps(steps),
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    accepted, declined = json.loads(done.stdout)["steps"]
    assert accepted.get("isError") is False and accepted["content"][-1]["text"] == "3"
    assert accepted["elicitations"] and "confirm-mcp1 wants to call shop.add" in accepted["elicitations"][0]["message"]
    assert declined["isError"] is True and "Their reason: no" in declined["content"][0]["text"]
    counted = tools_view(server)["shop.add"]["agents"]["confirm-mcp1"]
    assert counted["accepted"] == 1 and counted["rejected"] == 1 and counted["at_agent"]["decisions"] == 2
    # and without elicitation, the 1.x client gets the fallback: held for a reviewer
    thread, box = in_background(
        subprocess.run,
        [str(MCP1_PYTHON), str(MCP1_AGENT), server.url("/mcp"), agent["token"]],
        input=json.dumps([["call", "shop.add", {"a": 9, "b": 9}, False]]),
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO_ROOT,
    )
    approval = pending_gateway(server, "shop.add", "confirm-mcp1")
    assert decide(server, approval["approval_id"], {"decision": "reject", "comment": "no"}).status_code == 200
    thread.join(60)
    [rejected] = json.loads(box["result"].stdout)["steps"]
    assert rejected["isError"] is True and "rejected" in rejected["content"][0]["text"]


def test_answers_count_in_the_calls_region_and_auto_for_the_agent_stops_the_asking(server):
    agent = make_agent(server, "confirm-learner")
    made = server.http.post(
        server.url("/api/gateway/tools/shop.add/regions"),
        timeout=10,
        json={"name": "small sums of the learner", "when": "params.a < 100", "identity": "confirm-learner"},
    )
    assert made.status_code == 201, made.text
    yes = types.ElicitResult(action="accept", content={"coach_decision": "run"})
    assert confirm_call(server, agent["token"], "shop.add", {"a": 1, "b": 1}, yes).is_error is False
    regions = server.http.get(server.url("/api/gateway/tools/shop.add/regions?identity=confirm-learner"), timeout=10)
    [region] = [r for r in regions.json()["items"] if r["id"] == made.json()["id"]]
    assert region["decisions"] == 1 and region["acceptance"] == 1.0, region
    [answer] = confirm_audits(server, "confirm-learner")
    assert answer["after"]["region_id"] == region["id"]
    # the tool in AUTO for this agent (forced here; earned by its answers otherwise), no spot checks: not asked
    promoted = server.http.post(
        server.url("/api/gateway/tools/shop.add/mode"),
        json={"mode": "auto", "agent": "confirm-learner", "force": True, "reason": "tests", "spot_check_rate": 0},
        timeout=10,
    )
    assert promoted.status_code == 200, promoted.text
    asked: list = []
    result = confirm_call(server, agent["token"], "shop.add", {"a": 200, "b": 1}, yes, asked=asked)
    assert result.is_error is False and text(result) == "201" and asked == []
    assert result.meta["io.coach/gateway"]["decision"] == "auto"
    # the region (in coaching) still asks for its calls: its own evidence decides there
    inside = confirm_call(server, agent["token"], "shop.add", {"a": 2, "b": 2}, yes, asked=asked)
    assert inside.is_error is False and len(asked) == 1
    # another agent is still asked: the tool is in AUTO for this one only
    other = make_agent(server, "confirm-learner-2")
    asked.clear()
    assert confirm_call(server, other["token"], "shop.add", {"a": 200, "b": 2}, yes, asked=asked).is_error is False
    assert len(asked) == 1


def test_a_slow_answer_gets_progress_and_no_answer_in_time_gets_the_fallback(server):
    agent = make_agent(server, "confirm-slow")
    yes = types.ElicitResult(action="accept", content={"coach_decision": "run"})
    progress: list = []
    result = confirm_call(
        server, agent["token"], "shop.add", {"a": 1, "b": 5}, yes, mode="legacy", progress=progress, delay_s=1.6
    )
    assert result.is_error is False and text(result) == "6"
    assert progress and "asking the person at the agent about shop.add" in progress[0]
    # unanswered within COACH_GATEWAY_CONFIRM_S: the rule's fallback (require_review): held for a reviewer
    thread, box = in_background(
        confirm_call, server, agent["token"], "shop.add", {"a": 2, "b": 5}, yes, mode="legacy", delay_s=CONFIRM_S + 20
    )
    approval = pending_gateway(server, "shop.add", "confirm-slow", timeout=CONFIRM_S + 30)
    assert decide(server, approval["approval_id"], {"decision": "approve"}).status_code == 200
    thread.join(60)
    assert "error" not in box, box.get("error")
    assert box["result"].is_error is False and text(box["result"]) == "7"
    held = [e for e in audit_calls(server, "confirm-slow") if e["decision"] == "require_review"]
    assert held and "no answer within" in held[0]["confirm_fallback"]
