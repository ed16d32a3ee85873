"""The five coaching decisions through REST (docs/design.md#decisions), and what a decision request may not do."""

from __future__ import annotations

import contextlib
import threading
import time
from datetime import datetime

import pytest
from sqlalchemy import text

from tests.conftest import authed_client, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "a", "tool": "echo", "params": {"msg": "hi {{ vars.who }}"}},
    {"id": "b", "tool": "echo", "params": {"got": "{{ steps.a.output.msg }}"}},
]
VARS = {"who": {"type": "string", "default": "world"}}
STAT_ZERO = {
    "suggestions_made": 0,
    "accepted": 0,
    "rejected": 0,
    "corrected": 0,
    "manual_executions": 0,
    "skipped": 0,
    "timed_out": 0,
}


def _coach(api, steps=STEPS, variables=None, **extra) -> tuple[str, str, dict]:
    """A workflow and a coaching execution settled at its first suggestion: (workflow id, execution id, it)."""
    wf = api.workflow(steps, variables=VARS, **extra)
    started = api.ok(
        "POST", "/api/executions/coaching", {"workflow_id": wf["id"], "variables": variables or {}}, status=201
    )
    api.settle(started["execution_id"])
    return wf["id"], started["execution_id"], _suggestion(api, started["execution_id"])


def _pending(api, ex_id: str) -> dict:
    return api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")


def _suggestion(api, ex_id: str) -> dict:
    body = _pending(api, ex_id)
    assert body["suggestion"] is not None, body
    return body["suggestion"]


def _decide(api, ex_id: str, suggestion_id: str, decision: str, status: int = 200, headers=None, **extra):
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": suggestion_id, "decision": decision, **extra},
        headers=headers or {},
    )
    assert code == status, body
    return body


def _step(ex: dict, step_id: str) -> dict:
    return next(s for s in ex["steps"] if s["step_id"] == step_id)


def _stats(api, ex_id: str) -> dict:
    return api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")


def _snapshot(api, ex_id: str) -> tuple:
    """Everything a refused decision must leave untouched."""
    ex = api.ok("GET", f"/api/executions/{ex_id}")
    return (
        ex["status"],
        ex["steps"],
        _pending(api, ex_id),
        _stats(api, ex_id),
        api.ok("GET", f"/api/metrics/workflows/{ex['workflow_id']}")["decisions"],
    )


def test_accept_runs_the_step_with_the_suggested_params_and_suggests_the_next(api):
    _, ex_id, sug = _coach(api)
    ann = make_user(api.services, "ann@test.local", "operator")
    body = _decide(api, ex_id, sug["suggestion_id"], "accept", headers={"Authorization": f"Bearer {ann}"})
    assert body["ok"] is True and (body["decision"]["decision"], body["decision"]["operator"]) == (
        "accept",
        "ann@test.local",
    )
    assert body["decision"]["suggestion_id"] == sug["suggestion_id"] and body["stats"]["accepted"] == 1
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (ex["status"], a["status"], a["decision"], a["params"], a["output"]) == (
        "waiting_decision",
        "succeeded",
        "accept",
        {"msg": "hi world"},
        {"msg": "hi world"},
    )
    nxt = _suggestion(api, ex_id)
    assert nxt["step_id"] == "b" and nxt["params"] == {"got": "hi world"}


def test_correct_runs_the_step_with_the_corrected_params(api):
    _, ex_id, sug = _coach(api)
    _decide(api, ex_id, sug["suggestion_id"], "correct", correction={"msg": "bye"}, feedback="too friendly")
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (a["status"], a["decision"], a["params"], a["output"]) == (
        "succeeded",
        "correct",
        {"msg": "bye"},
        {"msg": "bye"},
    )
    assert ex["status"] == "waiting_decision"
    assert _suggestion(api, ex_id)["params"] == {"got": "bye"}
    assert _stats(api, ex_id)["corrected"] == 1


def test_manual_does_not_run_the_step_and_its_output_is_the_manual_output(api):
    _, ex_id, sug = _coach(api)
    _decide(api, ex_id, sug["suggestion_id"], "manual", manual_output={"msg": "done by hand"})
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (a["status"], a["decision"], a["output"]) == ("succeeded", "manual", {"msg": "done by hand"})
    assert a["attempts"] == 0  # the tool never ran
    assert _suggestion(api, ex_id)["params"] == {"got": "done by hand"}
    assert _stats(api, ex_id)["manual_executions"] == 1


def test_skip_propagates_to_readers_but_not_to_plain_dependents(api):
    steps = [
        {"id": "a", "tool": "echo", "params": {"msg": "x"}},
        {"id": "reader", "tool": "echo", "params": {"got": "{{ steps.a.output.msg }}"}},
        {"id": "guarded", "tool": "echo", "depends_on": ["a"], "when": "steps.a.output.msg == 'x'", "params": {"n": 0}},
        {"id": "check", "type": "validation", "depends_on": ["a"], "condition": "steps.a.output.msg != ''"},
        {"id": "after", "tool": "echo", "depends_on": ["a"], "params": {"n": 1}},
    ]
    _, ex_id, sug = _coach(api, steps)
    assert sug["step_id"] == "a"
    _decide(api, ex_id, sug["suggestion_id"], "skip")
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (a["status"], a["decision"], a["output"]) == ("skipped", "skip", None)
    for reader in ("reader", "guarded", "check"):
        assert (_step(ex, reader)["status"], _step(ex, reader)["decision"]) == ("skipped", None), reader
    assert ex["status"] == "waiting_decision"
    nxt = _suggestion(api, ex_id)
    assert nxt["step_id"] == "after"
    _decide(api, ex_id, nxt["suggestion_id"], "accept")
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and _step(ex, "after")["output"] == {"n": 1}
    assert _stats(api, ex_id) == {**STAT_ZERO, "suggestions_made": 2, "skipped": 1, "accepted": 1}


def test_reject_with_ask_waits_for_a_correction_that_takes_only_correct_manual_or_skip(api):
    _, ex_id, sug = _coach(api)
    _decide(api, ex_id, sug["suggestion_id"], "reject", feedback="wrong greeting")
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_correction"
    a = _step(ex, "a")
    assert a["status"] not in ("succeeded", "running") and a["output"] is None
    fix = _suggestion(api, ex_id)
    assert fix["suggestion_id"] != sug["suggestion_id"]
    assert (fix["step_id"], fix["purpose"], fix["status"]) == ("a", "correction", "pending")
    assert "wrong greeting" in fix["rationale"]
    for refused in ("accept", "reject"):
        assert _decide(api, ex_id, fix["suggestion_id"], refused, status=409)["error"]["code"] == "conflict"
    assert _suggestion(api, ex_id)["suggestion_id"] == fix["suggestion_id"]
    _decide(api, ex_id, fix["suggestion_id"], "correct", correction={"msg": "hello"})
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (a["status"], a["decision"], a["output"]) == ("succeeded", "correct", {"msg": "hello"})
    assert ex["status"] == "waiting_decision" and _suggestion(api, ex_id)["step_id"] == "b"
    assert _stats(api, ex_id) == {**STAT_ZERO, "suggestions_made": 3, "rejected": 1, "corrected": 1}


def test_reject_with_ask_marks_the_step_with_the_feedback(api):
    _, ex_id, sug = _coach(api)
    _decide(api, ex_id, sug["suggestion_id"], "reject", feedback="wrong greeting")
    a = _step(api.settle(ex_id), "a")
    assert (a["status"], a["decision"], a["output"]) == ("waiting", "reject", None)
    assert "wrong greeting" in (a["error"] or "")


def test_reject_with_stop_fails_the_execution_with_the_feedback(api):
    steps = [{**STEPS[0], "on_reject": "stop"}, STEPS[1]]
    _, ex_id, sug = _coach(api, steps)
    _decide(api, ex_id, sug["suggestion_id"], "reject", feedback="never send this")
    ex = api.settle(ex_id)
    a = _step(ex, "a")
    assert (ex["status"], a["status"], a["decision"], a["output"]) == ("failed", "rejected", "reject", None)
    assert "never send this" in a["error"] and "never send this" in ex["error"]["message"]
    assert _pending(api, ex_id)["suggestions"] == []
    assert _step(ex, "b")["status"] != "succeeded"


def test_correct_with_params_failing_the_tool_schema_is_422_and_changes_nothing(api):
    steps = [{"id": "read", "tool": "file.read", "params": {"path": "notes.txt"}}]
    _, ex_id, sug = _coach(api, steps)
    before = _snapshot(api, ex_id)
    for correction, field in (
        ({"path": 5}, "correction.path"),
        ({"path": "x", "bogus": 1}, "correction"),
        ({}, "correction.path"),
        (None, "correction"),
        (["x"], "correction"),
    ):
        body = _decide(api, ex_id, sug["suggestion_id"], "correct", status=422, correction=correction)
        assert body["error"]["code"] == "validation_failed"
        assert field in body["error"]["details"], body
        assert all(k.startswith("correction") for k in body["error"]["details"]), body
    assert _snapshot(api, ex_id) == before
    assert _suggestion(api, ex_id)["suggestion_id"] == sug["suggestion_id"]


def test_a_second_decision_on_the_same_suggestion_is_409_and_changes_nothing(api):
    _, ex_id, sug = _coach(api)
    _decide(api, ex_id, sug["suggestion_id"], "accept")
    api.settle(ex_id)
    before = _snapshot(api, ex_id)
    for kind, extra in (("accept", {}), ("reject", {}), ("correct", {"correction": {"msg": "z"}})):
        assert _decide(api, ex_id, sug["suggestion_id"], kind, status=409, **extra)["error"]["code"] == "conflict"
    assert _snapshot(api, ex_id) == before


def test_a_decision_on_a_superseded_suggestion_is_409(api):
    _, ex_id, sug = _coach(api)
    api.ok("POST", f"/api/executions/{ex_id}/cancel")
    assert _decide(api, ex_id, sug["suggestion_id"], "accept", status=409)["error"]["code"] == "conflict"
    assert _stats(api, ex_id)["accepted"] == 0


def test_unknown_suggestion_or_execution_is_404(api):
    _, ex_id, sug = _coach(api)
    _, other, _ = _coach(api)  # a suggestion of another execution is unknown in this one
    for ex, sid in (
        (ex_id, "no-such-suggestion"),
        ("no-such-execution", sug["suggestion_id"]),
        (other, sug["suggestion_id"]),
    ):
        assert _decide(api, ex, sid, "accept", status=404)["error"]["code"] == "not_found"
    assert _stats(api, ex_id)["accepted"] == 0 and _stats(api, other)["accepted"] == 0


def test_missing_suggestion_id_or_unknown_decision_is_422(api):
    _, ex_id, sug = _coach(api)
    code, body = api.call("POST", f"/api/executions/{ex_id}/coaching/decision", {"decision": "accept"})
    assert code == 422 and "suggestion_id" in body["error"]["details"]
    assert "decision" in _decide(api, ex_id, sug["suggestion_id"], "approve", status=422)["error"]["details"]
    assert _stats(api, ex_id) == {**STAT_ZERO, "suggestions_made": 1}


def test_idempotency_key_replays_the_first_answer_and_counts_once(api):
    wf_id, ex_id, sug = _coach(api)
    key = {"Idempotency-Key": "k-123"}
    first = _decide(api, ex_id, sug["suggestion_id"], "accept", headers=key)
    api.settle(ex_id)
    again = _decide(api, ex_id, sug["suggestion_id"], "accept", headers=key)
    assert again == first
    assert _stats(api, ex_id)["accepted"] == 1
    m = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert (m["decisions"], m["accepted"]) == (1, 1)
    nxt = _suggestion(api, ex_id)
    assert _decide(api, ex_id, nxt["suggestion_id"], "accept", status=409, headers=key)["error"]["code"] == "conflict"
    assert _suggestion(api, ex_id)["suggestion_id"] == nxt["suggestion_id"]
    assert _stats(api, ex_id)["accepted"] == 1


def test_decision_latency_is_recorded(api):
    wf_id, ex_id, sug = _coach(api)
    body = _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert body["decision"]["latency_ms"] >= 0
    latency = api.ok("GET", f"/api/metrics/workflows/{wf_id}")["decision_latency_ms"]
    assert latency["p50"] is not None and latency["p50"] >= 0 and latency["p90"] >= latency["p50"]


def test_stats_match_exactly_after_a_mixed_run(api):
    steps = [{"id": f"s{i}", "tool": "echo", "params": {"i": i}} for i in range(1, 6)]
    _, ex_id, sug = _coach(api, steps)
    plan = [
        ("accept", {}),
        ("correct", {"correction": {"i": 20}}),
        ("manual", {"manual_output": {"i": 3}}),
        ("skip", {}),
        ("reject", {"feedback": "no"}),
        ("manual", {}),
    ]
    for kind, extra in plan:
        _decide(api, ex_id, _suggestion(api, ex_id)["suggestion_id"], kind, **extra)
        api.settle(ex_id)
    ex = api.settle(ex_id)
    assert ex["status"] == "completed"
    assert _stats(api, ex_id) == {
        "suggestions_made": 6,
        "accepted": 1,
        "rejected": 1,
        "corrected": 1,
        "manual_executions": 2,
        "skipped": 1,
        "timed_out": 0,
    }
    assert [_step(ex, f"s{i}")["decision"] for i in range(1, 6)] == ["accept", "correct", "manual", "skip", "manual"]


def test_the_suggestion_has_every_design_field(api):
    _, ex_id, sug = _coach(api, variables={"who": "Ada"})
    body = _pending(api, ex_id)
    assert body["execution_id"] == ex_id and body["status"] == "waiting_decision" and body["paused"] is False
    assert body["suggestions"] == [body["suggestion"]]
    sug = body["suggestion"]
    assert sug["suggestion_id"] and sug["execution_id"] == ex_id
    assert (sug["step_id"], sug["tool"], sug["params"]) == ("a", "echo", {"msg": "hi Ada"})
    assert sug["confidence"] == 0.0 and isinstance(sug["confidence"], float)
    assert (sug["source"], sug["status"], sug["version"]) == ("definition", "pending", 1)
    assert datetime.fromisoformat(sug["created_at"].replace("Z", "+00:00")).tzinfo is not None


@contextlib.contextmanager
def _in_flight(services, ex_id: str):
    """Hold the execution's row lock (SQLite: the write lock) as a request still being applied would."""
    with services.db.transaction() as session:
        session.execute(
            text("SELECT id FROM executions WHERE id = :id" + ("" if services.db.is_sqlite else " FOR UPDATE")),
            {"id": ex_id},
        )
        yield


def _race(app, services, ex_id: str, bodies: list[dict], headers=None) -> list[tuple[int, dict]]:
    """Send the bodies from threads while the lock is held, so that they all arrive before anyone decides."""
    results: list = []

    def send(body):
        r = authed_client(app).post(f"/api/executions/{ex_id}/coaching/decision", json=body, headers=headers or {})
        results.append((r.status_code, r.get_json()))

    threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
    with _in_flight(services, ex_id):
        for t in threads:
            t.start()
        time.sleep(0.4)
    for t in threads:
        t.join(20)
    return results


def test_concurrent_decisions_on_one_suggestion_exactly_one_wins(api, app, services):
    wf_id, ex_id, sug = _coach(api)
    results = _race(
        app,
        services,
        ex_id,
        [{"suggestion_id": sug["suggestion_id"], "decision": k} for k in ("accept", "skip", "manual", "accept")],
    )
    assert sorted(code for code, _ in results) == [200, 409, 409, 409], results
    api.settle(ex_id)
    assert sum(v for k, v in _stats(api, ex_id).items() if k != "suggestions_made") == 1
    assert api.ok("GET", f"/api/metrics/workflows/{wf_id}")["decisions"] == 1


def test_concurrent_retries_with_one_idempotency_key_all_get_the_first_answer(api, app, services, request):
    _, ex_id, sug = _coach(api)
    body = {"suggestion_id": sug["suggestion_id"], "decision": "accept"}
    results = _race(app, services, ex_id, [body, body], {"Idempotency-Key": "retry-1"})
    assert [code for code, _ in results] == [200, 200], results
    assert results[0][1] == results[1][1]
    assert _stats(api, ex_id)["accepted"] == 1
