"""The coaching session around an execution: pause, resume, cancel; normal mode has none."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "a", "tool": "echo", "params": {"msg": "one"}},
    {"id": "b", "tool": "echo", "params": {"msg": "two"}},
]


def _coach(api, steps=STEPS) -> str:
    wf = api.workflow(steps)
    started = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"], "variables": {}}, status=201)
    assert started["mode"] == "coaching"
    ex = api.settle(started["execution_id"])
    assert ex["status"] == "waiting_decision", ex
    return ex["execution_id"]


def _pending(api, ex_id: str) -> dict:
    return api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")


def _decide(api, ex_id: str, suggestion_id: str, decision: str = "accept"):
    return api.call(
        "POST", f"/api/executions/{ex_id}/coaching/decision", {"suggestion_id": suggestion_id, "decision": decision}
    )


def _stats(api, ex_id: str) -> dict:
    return api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")


def test_pause_blocks_decisions_and_resume_brings_back_the_same_suggestion(api):
    ex_id = _coach(api)
    sug = _pending(api, ex_id)["suggestion"]
    paused = api.ok("POST", f"/api/executions/{ex_id}/coaching/pause")
    assert paused["status"] == "paused" and paused["paused"] is True
    assert api.ok("GET", f"/api/executions/{ex_id}")["status"] == "paused"
    view = _pending(api, ex_id)
    assert view["paused"] is True and view["suggestion"]["suggestion_id"] == sug["suggestion_id"]

    for kind in ("accept", "skip", "reject"):
        code, body = _decide(api, ex_id, sug["suggestion_id"], kind)
        assert code == 409 and body["error"]["code"] == "conflict", body
    assert _stats(api, ex_id)["accepted"] == 0 and _stats(api, ex_id)["skipped"] == 0

    resumed = api.ok("POST", f"/api/executions/{ex_id}/coaching/resume")
    assert resumed["status"] == "waiting_decision" and resumed["paused"] is False
    assert resumed["suggestion"]["suggestion_id"] == sug["suggestion_id"]
    assert resumed["suggestion"]["status"] == "pending"
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision"
    assert _pending(api, ex_id)["suggestion"]["suggestion_id"] == sug["suggestion_id"]

    code, body = _decide(api, ex_id, sug["suggestion_id"])
    assert code == 200 and body["ok"] is True
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision"
    assert _pending(api, ex_id)["suggestion"]["step_id"] == "b"
    assert _stats(api, ex_id)["accepted"] == 1


def test_pause_and_resume_during_a_correction_keep_the_correction_suggestion(api):
    ex_id = _coach(api)
    sug = _pending(api, ex_id)["suggestion"]
    assert _decide(api, ex_id, sug["suggestion_id"], "reject")[0] == 200
    assert api.settle(ex_id)["status"] == "waiting_correction"
    fix = _pending(api, ex_id)["suggestion"]
    paused = api.ok("POST", f"/api/executions/{ex_id}/coaching/pause")
    assert paused["status"] == "paused" and paused["suggestion"]["suggestion_id"] == fix["suggestion_id"]
    assert _decide(api, ex_id, fix["suggestion_id"], "skip")[0] == 409
    resumed = api.ok("POST", f"/api/executions/{ex_id}/coaching/resume")
    assert resumed["status"] == "waiting_correction"
    assert resumed["suggestion"]["suggestion_id"] == fix["suggestion_id"]
    assert api.settle(ex_id)["status"] == "waiting_correction"
    assert _decide(api, ex_id, fix["suggestion_id"], "skip")[0] == 200
    assert api.settle(ex_id)["status"] == "waiting_decision"


def test_pausing_a_normal_execution_is_409(api):
    wf = api.workflow([{"id": "ask", "type": "human_input", "question": "Proceed?"}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_clarification"
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/coaching/pause")
    assert code == 409 and body["error"]["code"] == "conflict"
    assert api.ok("GET", f"/api/executions/{ex['execution_id']}")["status"] == "waiting_clarification"


def test_resume_when_not_paused_is_409(api):
    ex_id = _coach(api)
    sug = _pending(api, ex_id)["suggestion"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/coaching/resume")
    assert code == 409 and body["error"]["code"] == "conflict"
    assert api.settle(ex_id)["status"] == "waiting_decision"
    assert _pending(api, ex_id)["suggestion"]["suggestion_id"] == sug["suggestion_id"]


def test_pause_of_a_finished_execution_is_409(api):
    ex_id = _coach(api, STEPS[:1])
    _decide(api, ex_id, _pending(api, ex_id)["suggestion"]["suggestion_id"])
    assert api.settle(ex_id)["status"] == "completed"
    code, _ = api.call("POST", f"/api/executions/{ex_id}/coaching/pause")
    assert code == 409
    assert api.ok("GET", f"/api/executions/{ex_id}")["status"] == "completed"


def test_cancel_while_waiting_supersedes_the_suggestion_and_a_second_cancel_is_400(api):
    ex_id = _coach(api)
    sug = _pending(api, ex_id)["suggestion"]
    cancelled = api.ok("POST", f"/api/executions/{ex_id}/cancel")
    assert cancelled["status"] == "cancelled"
    view = _pending(api, ex_id)
    assert view["suggestion"] is None and view["suggestions"] == []
    code, body = _decide(api, ex_id, sug["suggestion_id"])
    assert code == 409 and body["error"]["details"].get("suggestion_status") == "superseded", body
    code, body = api.call("POST", f"/api/executions/{ex_id}/cancel")
    assert code == 400 and body["error"]["code"] == "bad_request"
    ex = api.settle(ex_id)
    assert ex["status"] == "cancelled"
    assert {s["status"] for s in ex["steps"]} == {"cancelled"}


def test_cancel_while_paused_supersedes_the_suggestion(api):
    ex_id = _coach(api)
    sug = _pending(api, ex_id)["suggestion"]
    api.ok("POST", f"/api/executions/{ex_id}/coaching/pause")
    assert api.ok("POST", f"/api/executions/{ex_id}/cancel")["status"] == "cancelled"
    assert _pending(api, ex_id)["suggestions"] == []
    assert _decide(api, ex_id, sug["suggestion_id"])[0] == 409
    assert api.call("POST", f"/api/executions/{ex_id}/coaching/resume")[0] == 409


def test_a_normal_execution_never_creates_suggestions(api):
    wf = api.workflow(STEPS)
    ex = api.settle(api.start(wf["id"], mode="normal")["execution_id"])
    assert ex["status"] == "completed" and ex["is_coaching"] is False
    assert [s["decision"] for s in ex["steps"]] == [None, None]
    view = _pending(api, ex["execution_id"])
    assert view["suggestion"] is None and view["suggestions"] == []
    assert all(v == 0 for v in _stats(api, ex["execution_id"]).values())
    m = api.ok("GET", f"/api/metrics/workflows/{wf['id']}")
    assert (m["suggestions"], m["decisions"]) == (0, 0)


def test_session_routes_of_an_unknown_execution_are_404(api):
    for method, route in (("GET", "suggestion"), ("GET", "stats"), ("POST", "pause"), ("POST", "resume")):
        code, body = api.call(method, f"/api/executions/nope/coaching/{route}")
        assert code == 404 and body["error"]["code"] == "not_found", route
