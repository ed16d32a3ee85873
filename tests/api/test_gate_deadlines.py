"""Deadlines on human gates through the test client (SQLite and PostgreSQL): a pending suggestion, a correction
request and a human_input step each fire their on_human_timeout once, as `system`, audited and not counted as an
operator's decision; a person who decides first wins, one who comes after the timeout gets 409."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from services.orm import utcnow
from tests.api.test_coaching_decisions import _coach, _decide, _pending, _stats, _step, _suggestion

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

LATER = timedelta(seconds=61)
A = {"id": "a", "tool": "echo", "params": {"msg": "hi {{ vars.who }}"}, "human_timeout_s": 60}
READS_A = {"id": "b", "tool": "echo", "params": {"got": "{{ steps.a.output.msg }}"}}
PLAIN = {"id": "c", "tool": "echo", "params": {"n": 1}}
ASK = {"id": "ask", "type": "human_input", "question": "Which account?", "human_timeout_s": 60}
USES_ANSWER = {"id": "use", "tool": "echo", "params": {"account": "{{ steps.ask.output.answer }}"}}


def fire(services, after: timedelta = LATER) -> int:
    return services.runner.scans.fire_due(utcnow() + after)


def gate_audit(api, ex_id: str) -> list[dict]:
    return api.ok("GET", f"/api/audit?execution_id={ex_id}&action=gate_timeout")["items"]


def decisions_counted(api, wf_id: str) -> int:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}")["decisions"]


def deadline_of(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# --- a pending suggestion -----------------------------------------------------------------------------------------


def test_a_suggestion_shows_its_deadline_and_the_execution_its_gates(api):
    before = utcnow()
    _, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "skip"}])
    assert sug["on_timeout"] == "skip"
    deadline = deadline_of(sug["deadline"])
    assert before + timedelta(seconds=59) < deadline <= utcnow() + timedelta(seconds=60)
    gate = api.ok("GET", f"/api/executions/{ex_id}")["gate"]
    assert deadline_of(gate["deadline"]) == deadline and gate["on_timeout"] == "skip" and gate["timeout_s"] == 60


def test_a_suggestion_without_deadline_has_none(api):
    _, ex_id, sug = _coach(api, [PLAIN])
    assert sug["deadline"] is None and sug["on_timeout"] is None
    assert "deadline" not in api.ok("GET", f"/api/executions/{ex_id}")["gate"]
    assert fire(api.services, timedelta(days=365)) == 0


def test_skip_on_timeout_skips_the_step_and_its_readers_once_as_system_and_counts_no_decision(api, services):
    wf_id, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "skip"}, READS_A, PLAIN])
    assert services.runner.scans.fire_due() == 0  # not due yet
    assert fire(services) == 1
    assert fire(services) == 0  # once
    ex = api.settle(ex_id)
    assert _step(ex, "a")["status"] == "skipped" and _step(ex, "a")["decision"] == "timeout_skip"
    assert _step(ex, "a")["error"] == "no decision within 60s: skipped"
    assert _step(ex, "b")["status"] == "skipped"
    assert ex["status"] == "waiting_decision" and _suggestion(api, ex_id)["step_id"] == "c"
    audit = gate_audit(api, ex_id)
    assert [(e["actor"], e["result"], e["target_id"]) for e in audit] == [("system", "skip", sug["suggestion_id"])]
    stats = _stats(api, ex_id)
    assert (stats["timed_out"], stats["skipped"], stats["suggestions_made"]) == (1, 0, 2)
    assert decisions_counted(api, wf_id) == 0


def test_accept_on_timeout_runs_the_suggested_params(api, services):
    wf_id, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "accept"}], {"who": "ann"})
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == "completed", ex
    assert _step(ex, "a")["decision"] == "timeout_accept" and _step(ex, "a")["output"] == {"msg": "hi ann"}
    assert decisions_counted(api, wf_id) == 0
    assert gate_audit(api, ex_id)[0]["result"] == "accept"


def test_accept_on_timeout_is_still_judged_by_the_policy_when_it_runs(api, services):
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "echo needs review",
            "effect": "require_review",
            "order": 0,
            "reason": "tests",
            "match": {"tool": "echo"},
        },
        status=201,
    )
    _, ex_id, _ = _coach(api, [{**A, "on_human_timeout": "accept"}])
    assert fire(services) == 1
    ex = api.settle(ex_id)  # nobody reviewed the call: a policy that asks for a review opens one
    assert ex["status"] == "waiting_approval" and ex["gate"]["approval_kind"] == "tool_call", ex


def test_fail_on_timeout_fails_the_execution_saying_why(api, services):
    _, ex_id, _ = _coach(api, [{**A, "on_human_timeout": "fail"}, PLAIN])
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and ex["error"]["message"] == "no decision within 60s: the execution fails"
    assert _step(ex, "a")["status"] == "failed" and _pending(api, ex_id)["suggestion"] is None


def test_the_workflow_default_applies_to_every_suggestion(api, services):
    _, ex_id, sug = _coach(api, [PLAIN, {**PLAIN, "id": "d"}], human_timeout_s=30, on_human_timeout="skip")
    assert sug["on_timeout"] == "skip"
    assert fire(services, timedelta(seconds=31)) == 1
    api.settle(ex_id)
    assert _suggestion(api, ex_id)["step_id"] == "d"
    assert fire(services, timedelta(seconds=62)) == 1
    assert api.settle(ex_id)["status"] == "completed"


# --- races --------------------------------------------------------------------------------------------------------


def test_a_decision_before_the_deadline_fires_leaves_nothing_to_fire(api, services):
    _, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "fail"}])
    _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert fire(services) == 0
    assert api.settle(ex_id)["status"] == "completed" and gate_audit(api, ex_id) == []


def test_a_decision_after_the_timeout_is_409_and_changes_nothing(api, services):
    wf_id, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "skip"}, PLAIN])
    assert fire(services) == 1
    body = _decide(api, ex_id, sug["suggestion_id"], "accept", status=409)
    assert "timed_out" in body["error"]["message"]
    ex = api.settle(ex_id)
    assert _step(ex, "a")["status"] == "skipped" and decisions_counted(api, wf_id) == 0


# --- a correction request -----------------------------------------------------------------------------------------


def test_a_correction_request_left_alone_is_skipped_and_the_run_goes_on(api, services):
    wf_id, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "skip"}, PLAIN])
    _decide(api, ex_id, sug["suggestion_id"], "reject", feedback="wrong")
    correction = _suggestion(api, ex_id)
    assert correction["purpose"] == "correction" and correction["on_timeout"] == "skip" and correction["deadline"]
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert _step(ex, "a")["status"] == "skipped" and _suggestion(api, ex_id)["step_id"] == "c"
    assert gate_audit(api, ex_id)[0]["before"]["kind"] == "correction"
    assert decisions_counted(api, wf_id) == 1  # the reject, not the timeout


def test_accept_does_not_fit_a_correction_request_so_it_fails(api, services):
    _, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "accept"}])
    _decide(api, ex_id, sug["suggestion_id"], "reject", feedback="no")
    assert _suggestion(api, ex_id)["on_timeout"] == "fail"
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and ex["error"]["message"] == "no correction within 60s: the execution fails"


# --- a clarification ----------------------------------------------------------------------------------------------


def asked(api, **timeout) -> str:
    ex = api.run([{**ASK, **timeout}, USES_ANSWER])
    assert ex["status"] == "waiting_clarification" and ex["gate"]["deadline"], ex
    return ex["execution_id"]


def test_answer_on_timeout_answers_with_the_timeout_answer(api, services):
    ex_id = asked(api, on_human_timeout="answer", timeout_answer="petty cash")
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == "completed", ex
    assert _step(ex, "ask")["output"] == {"answer": "petty cash"} and _step(ex, "ask")["decision"] == "timeout_answer"
    assert _step(ex, "use")["output"] == {"account": "petty cash"}
    assert gate_audit(api, ex_id)[0]["target_id"] == f"{ex_id}/ask"


@pytest.mark.parametrize("action, status, use", [("skip", "completed", "skipped"), ("fail", "failed", "pending")])
def test_skip_or_fail_on_timeout_of_a_clarification(api, services, action, status, use):
    ex_id = asked(api, on_human_timeout=action)
    assert fire(services) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == status and _step(ex, "use")["status"] == use, ex


def test_an_answer_after_the_timeout_is_409_and_one_before_leaves_nothing_to_fire(api, services):
    ex_id = asked(api, on_human_timeout="skip")
    assert fire(services) == 1
    assert api.call("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "late"})[0] == 409
    other = asked(api, on_human_timeout="fail")
    api.ok("POST", f"/api/executions/{other}/steps/ask/answer", {"answer": "in time"})
    assert fire(services) == 0
    assert api.settle(other)["status"] == "completed"


# --- pause, definitions -------------------------------------------------------------------------------------------


def test_a_paused_session_does_not_time_out_and_resuming_gives_the_whole_time_again(api, services):
    _, ex_id, sug = _coach(api, [{**A, "on_human_timeout": "fail"}])
    api.ok("POST", f"/api/executions/{ex_id}/coaching/pause")
    paused = _suggestion(api, ex_id)
    assert paused["deadline"] is None and api.ok("GET", f"/api/executions/{ex_id}")["gate"]["deadline"] is None
    assert fire(services) == 0
    api.ok("POST", f"/api/executions/{ex_id}/coaching/resume")
    resumed = _suggestion(api, ex_id)
    assert deadline_of(resumed["deadline"]) > deadline_of(sug["deadline"])
    assert fire(services, timedelta(seconds=30)) == 0
    assert fire(services, timedelta(seconds=90)) == 1


@pytest.mark.parametrize(
    "step, field",
    [
        ({**A, "human_timeout_s": 0}, "steps[0].human_timeout_s"),
        ({**ASK, "on_human_timeout": "accept"}, "steps[0].on_human_timeout"),
        ({**ASK, "on_human_timeout": "answer"}, "steps[0].timeout_answer"),
    ],
)
def test_a_bad_deadline_is_a_422_naming_the_field(api, step, field):
    code, body = api.call("POST", "/api/workflows", {"name": "wf", "steps": [step]})
    assert code == 422 and field in body["error"]["details"], body


def test_a_deadline_left_on_an_execution_that_no_longer_waits_is_dropped_not_fired(api, services):
    from services.models.executions import Execution

    ex_id = api.run([PLAIN])["execution_id"]
    with services.db.transaction() as session:
        session.get(Execution, ex_id).gate_due_at = utcnow()
    assert fire(services) == 0
    with services.db.read() as session:
        assert session.get(Execution, ex_id).gate_due_at is None
    assert api.ok("GET", f"/api/executions/{ex_id}")["status"] == "completed" and gate_audit(api, ex_id) == []
