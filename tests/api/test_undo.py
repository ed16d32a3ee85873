"""Taking a decision back (issue #31 item 4, docs/design.md#decisions (undo) and docs/operations.md) through the test
client, on SQLite and PostgreSQL: a decision on a risky call (a destructive tool, or one a policy flagged) is held for
the workspace's undo window; an
undo within it puts the suggestion back exactly as it was and counts nothing; the deadline scanner releases a held
decision after the window and only then is it counted; once its step started, an undo is 409."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.orm import utcnow
from tests.api.test_coaching_decisions import _coach, _decide, _pending, _stats, _step, _suggestion

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

WIPE = {"id": "wipe", "tool": "shell.run", "params": {"command": ["echo", "wiped"]}}  # destructive
NOTE = {"id": "note", "tool": "echo", "params": {"msg": "done"}}  # read: never held
WINDOW_S = 10


@pytest.fixture(autouse=True)
def undo_window(api):
    api.ok("PUT", "/api/workspace/undo", {"window_s": WINDOW_S})
    yield
    api.ok("PUT", "/api/workspace/undo", {"window_s": None})


def _undo(api, ex_id: str, suggestion_id: str, status: int = 200) -> dict:
    code, body = api.call("POST", f"/api/executions/{ex_id}/coaching/undo", {"suggestion_id": suggestion_id})
    assert code == status, body
    return body


def _release(services, after_s: float = WINDOW_S + 1) -> int:
    return services.runner.scans.fire_due(utcnow() + timedelta(seconds=after_s))


def _counted(api, wf_id: str) -> int:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}")["decisions"]


def test_the_workspace_sets_its_undo_window(api):
    assert api.ok("GET", "/api/workspace/undo") == {"window_s": WINDOW_S, "default_s": 0.0, "workspace": True}
    code, body = api.call("PUT", "/api/workspace/undo", {"window_s": 100000})
    assert code == 422 and "window_s" in body["error"]["details"]


def test_accepting_a_destructive_step_holds_it_and_undo_puts_the_suggestion_back_uncounted(api, services):
    wf_id, ex_id, sug = _coach(api, [WIPE, NOTE])
    body = _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert body["decision"]["held_until"] and body["execution"]["gate"]["kind"] == "held"
    ex = api.settle(ex_id)
    assert _step(ex, "wipe")["status"] == "waiting" and _step(ex, "wipe")["output"] is None  # it did not run
    assert _pending(api, ex_id)["suggestion"] is None  # out of the queue while held
    assert _stats(api, ex_id)["accepted"] == 0 and _counted(api, wf_id) == 0

    undone = _undo(api, ex_id, sug["suggestion_id"])
    assert undone["suggestion"]["status"] == "pending"
    again = _suggestion(api, ex_id)
    assert (again["suggestion_id"], again["params"], again["step_id"]) == (sug["suggestion_id"], sug["params"], "wipe")
    assert api.ok("GET", f"/api/executions/{ex_id}")["gate"]["kind"] == "decision"
    assert _release(services) == 0  # nothing is held any more: the window's end does nothing
    assert _stats(api, ex_id)["accepted"] == 0 and _counted(api, wf_id) == 0
    audit = api.ok("GET", f"/api/audit?execution_id={ex_id}&action=decision_undo")["items"]
    assert [(e["result"], e["target_id"], e["before"]["decision"]) for e in audit] == [
        ("undone", sug["suggestion_id"], "accept")
    ]

    # decided again, it is the only decision counted
    _decide(api, ex_id, sug["suggestion_id"], "skip")
    assert _release(services) == 1
    ex = api.settle(ex_id)
    assert _step(ex, "wipe")["status"] == "skipped" and _counted(api, wf_id) == 1
    assert _stats(api, ex_id)["skipped"] == 1


def test_a_held_step_runs_once_the_window_ends_and_is_counted_then(api, services):
    wf_id, ex_id, sug = _coach(api, [WIPE, NOTE])
    _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert _release(services, after_s=1) == 0  # the window has not ended
    assert _release(services) == 1
    assert _release(services) == 0  # once
    ex = api.settle(ex_id)
    assert _step(ex, "wipe")["status"] == "succeeded" and "wiped" in _step(ex, "wipe")["output"]["stdout"]
    assert _suggestion(api, ex_id)["step_id"] == "note"
    assert _stats(api, ex_id)["accepted"] == 1 and _counted(api, wf_id) == 1

    body = _undo(api, ex_id, sug["suggestion_id"], status=409)
    assert body["error"]["code"] == "step_started"
    assert "the step already started" in body["error"]["message"]


def test_a_non_risky_accept_runs_at_once_and_cannot_be_taken_back(api):
    wf_id, ex_id, sug = _coach(api, [NOTE, WIPE])
    body = _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert body["decision"]["held_until"] is None
    ex = api.settle(ex_id)
    assert _step(ex, "note")["status"] == "succeeded" and _counted(api, wf_id) == 1
    assert "the step already started" in _undo(api, ex_id, sug["suggestion_id"], status=409)["error"]["message"]


def test_a_call_the_policy_flagged_is_held_too(api, services):
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "notes are checked",
            "effect": "require_review",
            "order": 0,
            "reason": "tests",
            "match": {"tool": "echo"},
        },
        status=201,
    )
    try:
        _, ex_id, sug = _coach(api, [NOTE])
        assert sug["policy"]["effect"] == "require_review"
        assert _decide(api, ex_id, sug["suggestion_id"], "accept")["decision"]["held_until"]
        _undo(api, ex_id, sug["suggestion_id"])
        assert _suggestion(api, ex_id)["status"] == "pending"
    finally:
        for rule in api.ok("GET", "/api/policies")["items"]:
            api.ok("DELETE", f"/api/policies/{rule['id']}", status=204)


def test_undo_of_a_pending_suggestion_or_an_unknown_one_says_why(api):
    _, ex_id, sug = _coach(api, [WIPE])
    assert _undo(api, ex_id, sug["suggestion_id"], status=409)["error"]["code"] == "nothing_to_undo"
    _undo(api, ex_id, "0" * 32, status=404)
    assert api.call("POST", f"/api/executions/{ex_id}/coaching/undo", {})[0] == 422


def test_a_second_decision_while_held_is_409_and_pause_waits_for_the_window(api):
    _, ex_id, sug = _coach(api, [WIPE])
    _decide(api, ex_id, sug["suggestion_id"], "accept")
    assert "held" in _decide(api, ex_id, sug["suggestion_id"], "skip", status=409)["error"]["message"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/coaching/pause")
    assert code == 409 and "undo" in body["error"]["message"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/pause", {"step_id": "wipe", "question": "sure?"})
    assert code == 409 and "undo" in body["error"]["message"]


def test_cancelling_while_held_never_runs_the_step(api, services):
    _, ex_id, sug = _coach(api, [WIPE])
    _decide(api, ex_id, sug["suggestion_id"], "accept")
    api.ok("POST", f"/api/executions/{ex_id}/cancel")
    assert _release(services) == 0
    ex = api.settle(ex_id)
    assert ex["status"] == "cancelled" and _step(ex, "wipe")["output"] is None
    assert _undo(api, ex_id, sug["suggestion_id"], status=409)["error"]["code"] == "nothing_to_undo"
