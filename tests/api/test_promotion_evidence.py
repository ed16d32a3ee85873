"""Promotion with the evidence (issue 31, item 7) through the API, on SQLite and PostgreSQL: a forced promotion
needs an admin and a reason (audited); a promotion lists the workflow's steps that are not ready; each step's
snapshot says how many decisions it still needs; the decisions behind a step are listed, newest first."""

from __future__ import annotations

import pytest

from tests.conftest import authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "first", "tool": "echo", "params": {"v": "one"}},
    {"id": "second", "tool": "echo", "params": {"v": "two"}},
    {"id": "check", "type": "validation", "target": "steps.second.output", "schema": {"type": "object"}},
]
LENIENT = {"coaching_after": 2, "auto_min_window": 3, "window": 5, "auto_acceptance": 0.5, "auto_alpha": 0.2}


def _decide_run(api, wf_id: str, first: str, second: str) -> str:
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
        "execution_id"
    ]
    for kind in (first, second):
        api.settle(ex_id)
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        api.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {"suggestion_id": sug["suggestion_id"], "decision": kind},
        )
    api.settle(ex_id)
    return ex_id


def _workflow(api) -> str:
    wf_id = api.workflow(STEPS)["id"]
    api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", LENIENT)
    return wf_id


def test_a_forced_promotion_needs_an_admin_and_a_reason_and_is_audited(app, api):
    wf_id = _workflow(api)
    path = f"/api/workflows/{wf_id}/mode"
    lead = authed_client(app, "lead")
    assert lead.post(path, json={"mode": "auto"}).status_code == 409  # not ready: the server's refusal stays
    assert lead.post(path, json={"mode": "auto", "force": True, "reason": "why not"}).status_code == 403

    status, body = api.call("POST", path, {"mode": "auto", "force": True})
    assert status == 422 and list(body["error"]["details"]) == ["reason"], body
    status, body = api.call("POST", path, {"mode": "auto", "force": True, "reason": "   "})
    assert status == 422 and list(body["error"]["details"]) == ["reason"], body
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching"

    promoted = api.ok("POST", path, {"mode": "auto", "force": True, "reason": "month-end batch, reviewed by hand"})
    assert promoted["mode"] == "auto"
    assert [s["step_id"] for s in promoted["steps_not_ready"]] == ["first", "second"]  # not the validation step
    event = api.ok("GET", "/api/audit?action=promotion")["items"][0]
    assert event["after"]["forced"] is True
    assert event["after"]["reason"] == "month-end batch, reviewed by hand"
    assert [s["step_id"] for s in event["after"]["steps_not_ready"]] == ["first", "second"]


def test_a_forced_step_promotion_needs_a_reason_too(api):
    wf_id = _workflow(api)
    path = f"/api/workflows/{wf_id}/steps/first/mode"
    status, body = api.call("POST", path, {"mode": "auto", "force": True})
    assert status == 422 and list(body["error"]["details"]) == ["reason"], body
    api.ok("POST", path, {"mode": "auto", "force": True, "reason": "read-only step"})
    event = api.ok("GET", "/api/audit?action=step_promotion")["items"][0]
    assert (event["target_id"], event["after"]["reason"]) == (f"{wf_id}/first", "read-only step")


def test_a_ready_workflow_promotion_lists_the_steps_still_not_ready(api):
    wf_id = _workflow(api)
    for _ in range(5):
        _decide_run(api, wf_id, "accept", "reject")
    metrics = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    first, second = metrics["steps"]["first"], metrics["steps"]["second"]
    assert first["auto_ready"] is True and first["decisions_needed"] == 0
    assert second["auto_ready"] is False and second["decisions_needed"] >= 1
    assert second["evidence"]["threshold"] == 5.0
    if not metrics["auto_ready"]:  # half of the decisions are rejects: force, as an admin would
        promoted = api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "t"})
    else:
        promoted = api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    assert [(s["step_id"], s["decisions_needed"]) for s in promoted["steps_not_ready"]] == [
        ("second", second["decisions_needed"])
    ]


def test_the_decisions_behind_a_step_newest_first(api):
    wf_id = _workflow(api)
    runs = [_decide_run(api, wf_id, "accept", kind) for kind in ("skip", "reject", "accept")]
    items = api.ok("GET", f"/api/metrics/workflows/{wf_id}/steps/second/decisions")["items"]
    assert [(d["decision"], d["execution_id"], d["counted"]) for d in items] == [
        ("accept", runs[2], True),
        ("reject", runs[1], True),
        ("skip", runs[0], False),
    ]
    assert all(d["operator"] == "admin@test.local" for d in items)
    assert len(api.ok("GET", f"/api/metrics/workflows/{wf_id}/steps/second/decisions?limit=1")["items"]) == 1
    assert api.call("GET", f"/api/metrics/workflows/{wf_id}/steps/second/decisions?limit=0")[0] == 422
    assert api.call("GET", "/api/metrics/workflows/nope/steps/second/decisions")[0] == 404


def test_each_decision_says_what_it_did_to_the_e_value(api):
    """Issue 40, item 19: the dashboard shows what the last decisions did to the evidence (a reject brings the
    e-value down and asks for more accepts), per step and for the workflow, whose evidence pools its steps."""
    wf_id = _workflow(api)
    for first, second in (("accept", "accept"), ("accept", "accept"), ("accept", "reject"), ("accept", "skip")):
        _decide_run(api, wf_id, first, second)
    items = api.ok("GET", f"/api/metrics/workflows/{wf_id}/steps/second/decisions")["items"]
    assert [d["decision"] for d in items] == ["skip", "reject", "accept", "accept"]
    skip, reject, accept2, accept1 = (d["evidence"] for d in items)
    assert accept1["e_value_before"] == 1.0 and accept1["e_value_after"] > 1.0
    assert accept2["e_value_before"] == accept1["e_value_after"]
    assert reject["e_value_before"] == accept2["e_value_after"] > reject["e_value_after"]
    assert reject["accepts_needed_after"] > accept2["accepts_needed_after"]
    assert skip["e_value_before"] == skip["e_value_after"] == reject["e_value_after"]
    step = api.ok("GET", f"/api/metrics/workflows/{wf_id}")["steps"]["second"]
    assert skip["e_value_after"] == step["evidence"]["e_value"]

    pooled = api.ok("GET", f"/api/metrics/workflows/{wf_id}/decisions")["items"]
    assert len(pooled) == 8 and {d["step_id"] for d in pooled} == {"first", "second"}
    assert [d["created_at"] for d in pooled] == sorted((d["created_at"] for d in pooled), reverse=True)
    workflow = api.ok("GET", f"/api/metrics/workflows/{wf_id}")
    assert pooled[0]["evidence"]["e_value_after"] == workflow["evidence"]["e_value"]
    assert pooled[-1]["evidence"]["e_value_before"] == 1.0
    assert len(api.ok("GET", f"/api/metrics/workflows/{wf_id}/decisions?limit=3")["items"]) == 3
    assert api.call("GET", "/api/metrics/workflows/nope/decisions")[0] == 404
