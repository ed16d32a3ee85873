"""Check suggestions of an agent step's reviewed calls (issue #41 item 6; docs/autonomy.md#check-suggestions), through
the API against a scripted OpenAI-compatible server: with checks on, the agent's call of a tool is shown now and then
with one argument set to a value reviewers corrected away from that tool's calls before. The check never runs: an
accept is a miss, a reject or a correction a catch, for its operator only (never the tool's or the step's evidence);
the real review of the same call follows at once, and the agent gets the result of the real call only."""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import make_user


@pytest.fixture
def settings(settings, llm):
    return settings.with_overrides(llm_base_url=llm.base_url, llm_model="scripted", llm_max_retries=2, llm_timeout_s=10)


class Always(random.Random):
    """Every draw is 0.0: each suggestion the workspace's check_rate may make a check is one."""

    def random(self) -> float:
        return 0.0


@pytest.fixture
def drawn(services):
    kept = services.runner.rng
    services.runner.rng = Always()
    yield
    services.runner.rng = kept


STEP = {"id": "agent", "type": "agent", "goal": "Mail the report to {{ vars.to }}", "tools": ["echo"]}
VARS = {"to": {"type": "string"}}


def _script(llm, to: str) -> None:
    llm.script(
        f"report to {to}", [{"tool_calls": [{"name": "echo", "arguments": {"to": to, "n": 1}}]}, {"content": "sent"}]
    )


def _start(api, wf_id: str, to: str) -> tuple[str, dict]:
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {"to": to}}, status=201)[
        "execution_id"
    ]
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision", ex
    return ex_id, api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]


def _decide(api, ex_id: str, sug: dict, kind: str, headers=None, **extra) -> dict:
    body = {"suggestion_id": sug["suggestion_id"], "decision": kind, **extra}
    return api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body, headers=headers)


def _tool(api, wf_id: str) -> dict:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}")["steps"]["agent:echo"]


def _tool_results(api, ex_id: str) -> list:
    messages = api.ok("GET", f"/api/executions/{ex_id}/steps/agent/transcript")["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


@pytest.fixture
def corrected(api, llm):
    """An agent step whose echo call reviewers once corrected from to=wrong@example.com to right@example.com (checks
    off: a plain correction of the tool's call), the run then finished."""
    wf_id = api.workflow([STEP], variables=VARS)["id"]
    _script(llm, "wrong@example.com")
    ex_id, sug = _start(api, wf_id, "wrong@example.com")
    assert (sug["kind"], sug["purpose"]) == ("tool_call", "coaching")
    _decide(api, ex_id, sug, "correct", correction={"to": "right@example.com", "n": 1})
    assert api.settle(ex_id)["status"] == "completed"
    return wf_id


def test_an_agents_call_is_shown_as_a_check_that_never_runs_and_its_real_review_follows(
    api, llm, corrected, drawn, services
):
    api.ok("PUT", "/api/workspace/reviews", {"check_rate": 0.2})
    before = _tool(api, corrected)
    _script(llm, "ops@example.com")
    ex_id, check = _start(api, corrected, "ops@example.com")
    assert (check["kind"], check["purpose"], check["tool"]) == ("tool_call", "check", "echo")
    assert check["params"] == {"to": "wrong@example.com", "n": 1}  # the value reviewers corrected away
    assert check["definition_params"] == {"to": "ops@example.com", "n": 1}  # what the agent asked for
    assert "check_change" not in check

    ann = {"Authorization": f"Bearer {make_user(services, 'ann@test.local', 'operator')}"}
    answer = _decide(api, ex_id, check, "accept", headers=ann)
    assert answer["check"]["result"] == "miss"
    assert (answer["check"]["param"], answer["check"]["shown"], answer["check"]["real"]) == (
        "to",
        "wrong@example.com",
        "ops@example.com",
    )
    # nothing ran: the agent waits for the real review of the same call, never a check itself
    assert _tool_results(api, ex_id) == [None]
    real = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert real["suggestion_id"] != check["suggestion_id"]
    assert (real["kind"], real["purpose"], real["params"]) == (
        "tool_call",
        "coaching",
        {"to": "ops@example.com", "n": 1},
    )
    assert real["tool_call_id"] == check["tool_call_id"]
    # the check counts for ann only: not in the tool's evidence, nor the agent step's
    after = _tool(api, corrected)
    assert (after["decisions"], after["accepted"]) == (before["decisions"], before["accepted"])
    reviewers = api.ok("GET", f"/api/metrics/workflows/{corrected}/reviewers")["items"]
    (figures,) = [r["checks"] for r in reviewers if r["operator"] == "ann@test.local"]
    assert (figures["checks"], figures["misses"], figures["catches"]) == (1, 1, 0)

    _decide(api, ex_id, real, "accept")
    assert api.settle(ex_id)["status"] == "completed"
    # the agent got the result of the real call only
    assert [json.loads(c) for c in _tool_results(api, ex_id)] == [{"to": "ops@example.com", "n": 1}]
    assert _tool(api, corrected)["decisions"] == before["decisions"] + 1
    audit = api.ok("GET", "/api/audit?action=check_result")["items"]
    assert audit[0]["result"] == "miss" and audit[0]["target_id"] == check["suggestion_id"]


@pytest.mark.parametrize("kind, extra", [("reject", {}), ("correct", {"correction": {"to": "x@example.com", "n": 1}})])
def test_rejecting_or_correcting_a_check_of_an_agents_call_is_a_catch(api, llm, corrected, drawn, kind, extra):
    api.ok("PUT", "/api/workspace/reviews", {"check_rate": 0.2})
    pack_before = [p for p in api.ok("GET", f"/api/correction-packs?workflow_id={corrected}")["items"]]
    _script(llm, "ops@example.com")
    ex_id, check = _start(api, corrected, "ops@example.com")
    assert check["purpose"] == "check"
    answer = _decide(api, ex_id, check, kind, **extra)
    assert answer["check"]["result"] == "catch"
    real = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert (real["purpose"], real["params"]) == ("coaching", {"to": "ops@example.com", "n": 1})
    # a check's correction teaches nothing: the tool's pack is as it was
    assert api.ok("GET", f"/api/correction-packs?workflow_id={corrected}")["items"] == pack_before
    _decide(api, ex_id, real, "skip")
    assert api.settle(ex_id)["status"] == "completed"


def test_a_check_whose_value_a_policy_denies_is_not_made_and_checks_off_make_none(api, llm, corrected, drawn):
    # off (the default): the same call is its plain review
    _script(llm, "ops@example.com")
    ex_id, sug = _start(api, corrected, "ops@example.com")
    assert sug["purpose"] == "coaching"
    _decide(api, ex_id, sug, "skip")
    api.settle(ex_id)
    # on, but the value reviewers corrected away is denied: no check
    api.ok("PUT", "/api/workspace/reviews", {"check_rate": 0.2})
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "never mail wrong",
            "effect": "deny",
            "match": {"tool": "echo", "params": "params.to == 'wrong@example.com'"},
        },
        status=201,
    )
    ex_id, sug = _start(api, corrected, "ops@example.com")
    assert (sug["purpose"], sug["params"]) == ("coaching", {"to": "ops@example.com", "n": 1})


def test_a_real_call_a_policy_denies_by_the_time_its_check_is_decided_gets_the_denial(api, llm, corrected, drawn):
    api.ok("PUT", "/api/workspace/reviews", {"check_rate": 0.2})
    _script(llm, "ops@example.com")
    ex_id, check = _start(api, corrected, "ops@example.com")
    assert check["purpose"] == "check"
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "no ops mail",
            "effect": "deny",
            "match": {"tool": "echo", "params": "params.to == 'ops@example.com'"},
        },
        status=201,
    )
    assert _decide(api, ex_id, check, "reject")["check"]["result"] == "catch"
    assert api.settle(ex_id)["status"] == "completed"  # the agent was told, and finished
    messages = api.ok("GET", f"/api/executions/{ex_id}/steps/agent/transcript")["messages"]
    (tool,) = [m for m in messages if m["role"] == "tool"]
    assert "no ops mail" in (tool.get("error") or tool.get("content") or ""), tool
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"] is None
