"""Learning to stop asking, per MCP gateway tool, on the real server (`python wsgi.py`): the official MCP Python SDK's
client as the agent, the project's own MCP server over stdio as the upstream, registered *untrusted* so that the
workspace default holds every call of its tools (destructive by default). Reviews are decided through the REST API as
a lead would in the queue; promotion through POST /api/gateway/tools/<tool>/mode."""

from __future__ import annotations

import pytest

from tests.support.gateway_agents import call, decide, make_agent, pending_gateway, text
from tests.support.live_server import LiveServer
from tests.support.mcp_servers import server_with_shop, stdio_command

SHOP = stdio_command("shop")
HOLD_S = 0.3  # a held call answers "awaits review" quickly: the tests decide it afterwards
READY_AFTER = 28  # accepts in a row that make a new scope AUTO-ready at the defaults (docs/autonomy.md)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def server(request, tmp_path_factory):
    rules = [
        {
            "name": "no big sums",
            "effect": "deny",
            "reason": "too much",
            "match": {"tool": "shop.add", "agent": "*", "params": "params.a > 1000"},
        },
        {
            "name": "a person looks at sums over 100",
            "effect": "require_review",
            "reason": "large",
            "match": {"tool": "shop.add", "agent": "*", "params": "params.a > 100"},
        },
    ]
    with server_with_shop(
        request,
        tmp_path_factory.mktemp("gateway-learning") / "server",
        trusted=False,
        policies=rules,
        env={"COACH_GATEWAY_HOLD_S": str(HOLD_S), "COACH_SPOT_CHECK_RATE": "0"},
    ) as live:
        yield live


def review(server: LiveServer, token: str, agent: str, tool: str, arguments: dict, decision: dict) -> dict:
    """The agent's call is held (the default policy): it answers that the call awaits review; a lead decides it."""
    held = call(server, token, tool, arguments)
    assert held.is_error is True and held.meta["io.coach/gateway"]["decision"] == "pending_review", text(held)
    approval = pending_gateway(server, tool, agent)
    assert approval["params"] == arguments
    answer = decide(server, approval["approval_id"], decision)
    assert answer.status_code == 200, answer.text
    return approval


def tools(server: LiveServer) -> dict[str, dict]:
    page = server.http.get(server.url("/api/metrics/tools"), timeout=10)
    assert page.status_code == 200, page.text
    return {t["tool"]: t for t in page.json()["items"] if t["source"] == "gateway"}


def set_mode(server: LiveServer, tool: str, body: dict):
    return server.http.post(server.url(f"/api/gateway/tools/{tool}/mode"), json=body, timeout=10)


def test_approvals_make_a_tool_ready_promoted_it_forwards_and_rejected_spot_checks_demote_it(server):
    agent = make_agent(server, "learner")
    before = tools(server)["shop.add"]
    assert before["mode"] == "coaching" and before["level"] == "OBSERVATION" and before["listed"] is True
    refused = set_mode(server, "shop.add", {"mode": "auto"})
    assert refused.status_code == 409 and refused.json()["error"]["details"] == {"auto_ready": False}

    for i in range(READY_AFTER):
        review(server, agent["token"], "learner", "shop.add", {"a": i, "b": 1}, {"decision": "approve"})
    ready = tools(server)["shop.add"]
    assert (ready["decisions"], ready["accepted"], ready["acceptance_rate"]) == (READY_AFTER, READY_AFTER, 1.0)
    assert ready["level"] == "AUTO" and ready["auto_ready"] is True
    assert ready["evidence"]["statistic"] >= ready["evidence"]["log_threshold"]
    assert ready["agents"]["learner"]["decisions"] == READY_AFTER and ready["agents"]["learner"]["auto_ready"]

    promoted = set_mode(server, "shop.add", {"mode": "auto", "spot_check_rate": 0})
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["mode"] == "auto" and promoted.json()["previous_mode"] == "coaching"
    # the next call is forwarded without a hold, and says so
    forwarded = call(server, agent["token"], "shop.add", {"a": 7, "b": 8})
    assert forwarded.is_error is False and text(forwarded) == "15"
    assert forwarded.meta["io.coach/gateway"]["decision"] == "auto"

    # the policy still wins: a rule that denies, and a rule that says a person must look
    denied = call(server, agent["token"], "shop.add", {"a": 5000, "b": 1})
    assert denied.is_error is True and "no big sums" in text(denied)
    review(server, agent["token"], "learner", "shop.add", {"a": 500, "b": 1}, {"decision": "approve"})
    assert tools(server)["shop.add"]["mode"] == "auto"

    # every AUTO call is now a spot check; rejected ones demote the tool (one reject is not evidence)
    assert set_mode(server, "shop.add", {"mode": "auto", "spot_check_rate": 1}).status_code == 200
    for i in range(4):
        approval = review(
            server,
            agent["token"],
            "learner",
            "shop.add",
            {"a": 50 + i, "b": 1},
            {"decision": "reject", "comment": "wrong sum"},
        )
        assert approval["message"].startswith("Spot check of shop.add")
        if i == 0:
            assert tools(server)["shop.add"]["mode"] == "auto"
    demoted = tools(server)["shop.add"]
    assert demoted["mode"] == "coaching" and demoted["auto_ready"] is False
    assert demoted["spot_checks"]["rejected"] == 4
    notices = server.http.get(server.url("/api/notices"), timeout=10).json()["items"]
    notice = [n for n in notices if n["kind"] == "gateway_demotion"][0]
    assert notice["tool"] == "shop.add" and notice["agent"] is None and "spot checks" in notice["reason"]
    audit = server.http.get(server.url("/api/audit?action=gateway_demotion"), timeout=10).json()["items"]
    assert audit[0]["actor"] == "system" and audit[0]["after"]["mode"] == "coaching"
    # held again: the next call waits for a person
    review(server, agent["token"], "learner", "shop.add", {"a": 60, "b": 1}, {"decision": "approve"})


def test_decisions_count_per_identity_edit_as_corrected_and_reject_as_rejected(server):
    agent = make_agent(server, "counted-bot")
    review(
        server,
        agent["token"],
        "counted-bot",
        "shop.tally",
        {"label": "x"},
        {"decision": "edit", "params": {"label": "y"}},
    )
    review(server, agent["token"], "counted-bot", "shop.tally", {"label": "z"}, {"decision": "reject"})
    review(server, agent["token"], "counted-bot", "shop.lookup", {"order_id": "A-1001"}, {"decision": "approve"})
    page = server.http.get(server.url("/api/gateway/tools"), timeout=10).json()
    mine = page["identities"]["counted-bot"]
    assert (mine["decisions"], mine["accepted"], mine["corrected"], mine["rejected"]) == (3, 1, 1, 1)
    assert mine["acceptance_rate"] == pytest.approx(1 / 3, abs=1e-3)
    tally = {t["tool"]: t for t in page["items"]}["shop.tally"]["agents"]["counted-bot"]
    assert (tally["corrected"], tally["rejected"], tally["mode"], tally["effective_mode"]) == (
        1,
        1,
        "coaching",
        "coaching",
    )


def test_a_tool_promoted_for_one_identity_forwards_its_calls_only_and_forcing_needs_a_reason(server):
    solo, other = make_agent(server, "solo-bot"), make_agent(server, "other-bot")
    assert set_mode(server, "shop.lookup", {"mode": "auto", "agent": "solo-bot"}).status_code == 409
    unreasoned = set_mode(server, "shop.lookup", {"mode": "auto", "agent": "solo-bot", "force": True})
    assert unreasoned.status_code == 422 and "reason" in unreasoned.json()["error"]["details"]
    forced = set_mode(
        server,
        "shop.lookup",
        {"mode": "auto", "agent": "solo-bot", "force": True, "reason": "read-only lookups", "spot_check_rate": 0},
    )
    assert forced.status_code == 200 and forced.json()["agent"] == "solo-bot"
    mine = call(server, solo["token"], "shop.lookup", {"order_id": "A-1001"})
    assert mine.is_error is False and mine.structured_content["customer"] == "Ada"
    review(server, other["token"], "other-bot", "shop.lookup", {"order_id": "A-1001"}, {"decision": "approve"})
    lookup = tools(server)["shop.lookup"]
    assert lookup["mode"] == "coaching"
    assert (lookup["agents"]["solo-bot"]["mode"], lookup["agents"]["solo-bot"]["mode_of"]) == ("auto", "agent")
    audit = server.http.get(server.url("/api/audit?action=gateway_promotion"), timeout=10).json()["items"]
    forced_event = [e for e in audit if e["after"].get("agent") == "solo-bot"][0]
    assert forced_event["after"]["forced"] is True and forced_event["after"]["reason"] == "read-only lookups"
    # a pin holds the identity's calls although the tool is promoted for it: pinned first, unpinned to promote
    assert set_mode(server, "shop.lookup", {"mode": "always_review", "agent": "solo-bot"}).status_code == 200
    review(server, solo["token"], "solo-bot", "shop.lookup", {"order_id": "A-1002"}, {"decision": "approve"})
    assert (
        set_mode(server, "shop.lookup", {"mode": "auto", "agent": "solo-bot", "force": True, "reason": "x"}).status_code
        == 409
    )


def test_unknown_tools_and_agents_are_404_and_a_rate_outside_0_to_1_is_422(server):
    assert set_mode(server, "shop.nope", {"mode": "auto"}).status_code == 404
    assert set_mode(server, "shop.add", {"mode": "coaching", "agent": "nobody"}).status_code == 404
    bad = set_mode(server, "shop.add", {"mode": "coaching", "spot_check_rate": 2})
    assert bad.status_code == 422 and "spot_check_rate" in bad.json()["error"]["details"]


def test_edits_become_a_tools_pack_whose_accepted_rule_is_suggested_then_applied_in_auto_and_stated(server):
    agent = make_agent(server, "fixer")
    late = lambda order: {"order_id": order, "amount": 5, "reason": "late"}  # noqa: E731
    for i in range(3):  # reviewers keep correcting the same thing
        review(
            server,
            agent["token"],
            "fixer",
            "shop.refund",
            late(f"A-{i}"),
            {"decision": "edit", "params": {**late(f"A-{i}"), "reason": "lost"}},
        )
    pack = tools(server)["shop.refund"]["pack"]
    assert (pack["corrections"], pack["enabled"]) == (3, False)
    assert [(r["field"], r["before"], r["after"], r["count"]) for r in pack["rules"]] == [("reason", "late", "lost", 3)]
    # not accepted yet: a held call offers nothing
    approval = review(server, agent["token"], "fixer", "shop.refund", late("A-7"), {"decision": "approve"})
    assert "learned" not in approval["policy"]
    accepted = server.http.patch(server.url("/api/gateway/tools/shop.refund/pack"), json={"enabled": True}, timeout=10)
    assert accepted.status_code == 200 and accepted.json()["enabled"] is True
    # accepted: the reviewer is offered the corrected arguments
    approval = review(
        server,
        agent["token"],
        "fixer",
        "shop.refund",
        late("A-8"),
        {"decision": "edit", "params": {**late("A-8"), "reason": "lost"}},
    )
    assert approval["policy"]["learned"]["params"] == {**late("A-8"), "reason": "lost"}
    assert "Learned corrections suggest: reason: 'late' → 'lost'" in approval["message"]
    # in AUTO the rule applies, and the agent is told what changed
    forced = set_mode(
        server, "shop.refund", {"mode": "auto", "force": True, "reason": "refunds are small", "spot_check_rate": 0}
    )
    assert forced.status_code == 200, forced.text
    result = call(server, agent["token"], "shop.refund", late("A-9"))
    assert result.is_error is False, text(result)
    assert '"reason": "lost"' in result.content[1].text and '"order_id": "A-9"' in result.content[1].text
    assert "Coach corrected the arguments" in result.content[0].text and "'late' → 'lost'" in result.content[0].text
    status = result.meta["io.coach/gateway"]
    assert status["decision"] == "auto" and status["corrected_arguments"]["reason"] == "lost"
    audit = server.http.get(server.url("/api/audit?action=gateway_call&per_page=50"), timeout=10).json()["items"]
    auto = [e["after"] for e in audit if e["after"].get("identity") == "fixer" and e["after"]["decision"] == "auto"][0]
    assert auto["arguments"]["reason"] == "lost" and auto["original_arguments"]["reason"] == "late"
    # a call the rule does not touch is forwarded as it is
    plain = call(server, agent["token"], "shop.refund", {"order_id": "A-10", "amount": 5, "reason": "damaged"})
    assert '"reason": "damaged"' in text(plain) and "corrected_arguments" not in plain.meta["io.coach/gateway"]


def regions_of(server: LiveServer, tool: str) -> dict:
    page = server.http.get(server.url(f"/api/gateway/tools/{tool}/regions"), timeout=10)
    assert page.status_code == 200, page.text
    return page.json()


def test_a_region_of_a_tool_becomes_ready_alone_forwards_its_calls_and_its_spot_checks_demote_it(server):
    """Issue #41: `shop.tally` calls labelled `ok…` are always approved, the others rejected: the region of the
    `ok` labels becomes AUTO-ready while the tool does not; promoted, its calls are forwarded (the agent is told
    which region let them through), the others still held; rejected spot checks demote the region alone."""
    agent = make_agent(server, "tally-bot")
    made = server.http.post(
        server.url("/api/gateway/tools/shop.tally/regions"),
        timeout=10,
        json={"name": "ok labels", "when": "params.label.startswith('ok')"},
    )
    assert made.status_code == 201, made.text
    region = made.json()
    assert (region["scope"], region["tool"], region["condition_version"]) == ("gateway", "shop.tally", 1)
    for i in range(80):
        review(server, agent["token"], "tally-bot", "shop.tally", {"label": f"ok-{i}"}, {"decision": "approve"})
        if i % 3 == 0:
            review(server, agent["token"], "tally-bot", "shop.tally", {"label": f"bad-{i}"}, {"decision": "reject"})
        if regions_of(server, "shop.tally")["items"][0]["auto_ready"]:
            break
    seen = regions_of(server, "shop.tally")["items"][0]
    assert seen["auto_ready"] is True and seen["acceptance"] == 1.0, seen
    assert tools(server)["shop.tally"]["auto_ready"] is False  # the tool as a whole is not
    promoted = server.http.post(server.url(f"/api/regions/{region['id']}/mode"), json={"mode": "auto"}, timeout=10)
    assert promoted.status_code == 200, promoted.text

    forwarded = call(server, agent["token"], "shop.tally", {"label": "ok-forwarded"})
    assert forwarded.is_error is False and text(forwarded) == "1"
    status = forwarded.meta["io.coach/gateway"]
    assert (status["decision"], status["mode_of"], status["region"]) == ("auto", "region", "ok labels")
    review(server, agent["token"], "tally-bot", "shop.tally", {"label": "bad-held"}, {"decision": "reject"})

    # every call of the region now sampled (the tool's own rate): rejected spot checks demote the region alone
    assert set_mode(server, "shop.tally", {"mode": "coaching", "spot_check_rate": 1}).status_code == 200
    for i in range(6):
        review(
            server,
            agent["token"],
            "tally-bot",
            "shop.tally",
            {"label": f"ok-spot-{i}"},
            {"decision": "reject", "comment": "not really"},
        )
        if regions_of(server, "shop.tally")["items"][0]["mode"] == "coaching":
            break
    demoted = regions_of(server, "shop.tally")["items"][0]
    assert demoted["mode"] == "coaching" and demoted["auto_ready"] is False
    assert tools(server)["shop.tally"]["mode"] == "coaching"
    audit = server.http.get(server.url("/api/audit?action=region_demotion"), timeout=10).json()["items"]
    assert audit[0]["target_id"] == region["id"] and "spot checks" in audit[0]["after"]["reason"]
