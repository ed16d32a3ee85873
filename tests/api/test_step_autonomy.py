"""Per-step autonomy through the API (docs/design.md#metrics-and-learning-levels): a lead promotes single steps that
are AUTO-ready while the workflow is still coached, pins steps to always_review, and spot checks demote a step on its
own."""

from __future__ import annotations

import pytest

from tests.api.test_coaching_metrics import _metrics, _workflow
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

TWO = [
    {"id": "first", "tool": "echo", "params": {"v": "one"}, "on_reject": "stop"},
    {"id": "second", "tool": "echo", "params": {"v": "two"}, "on_reject": "stop"},
]
# at level 0.2, 17 accepts in a row are evidence of acceptance >= 85% (see test_coaching_metrics)
QUICK = {"auto_alpha": 0.2, "coaching_after": 2, "auto_min_window": 3, "window": 5}


def _coaching_run(api, wf_id: str, decide: dict[str, str]) -> dict:
    """A coaching execution where each suggested step gets `decide[step_id]`; returns the settled execution and
    the purposes of the suggestions it made."""
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
    purposes = {}
    ex = api.settle(ex_id)
    while ex["status"] == "waiting_decision":
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        purposes[sug["step_id"]] = sug["purpose"]
        api.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {"suggestion_id": sug["suggestion_id"], "decision": decide[sug["step_id"]], "feedback": "no"},
        )
        ex = api.settle(ex_id)
    return {**ex, "purposes": purposes}


def _step_mode(api, wf_id, step_id, mode, **extra):
    return api.call("POST", f"/api/workflows/{wf_id}/steps/{step_id}/mode", {"mode": mode, **extra})


def _ready_first_step(api) -> str:
    """A workflow whose step `first` is AUTO-ready and whose step `second` is not (half of it is rejected...
    by manual runs, which count against it)."""
    wf_id = _workflow(api, TWO, **QUICK)
    for i in range(17):
        _coaching_run(api, wf_id, {"first": "accept", "second": "manual" if i % 2 else "accept"})
    steps = _metrics(api, wf_id)["steps"]
    assert steps["first"]["auto_ready"] is True and steps["second"]["auto_ready"] is False, steps
    assert _metrics(api, wf_id)["auto_ready"] is False
    return wf_id


def test_a_ready_step_is_promoted_alone_and_runs_unattended_while_the_rest_is_suggested(make_api):
    api = make_api(spot_check_rate=0.0)
    wf_id = _ready_first_step(api)
    code, body = _step_mode(api, wf_id, "second", "auto")
    assert code == 409 and "not AUTO-ready" in body["error"]["message"], body
    wf = api.ok("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "auto"})
    assert (wf["mode"], wf["step_modes"]) == ("coaching", {"first": "auto"})
    assert _metrics(api, wf_id)["steps"]["first"]["mode"] == "auto"
    ex = _coaching_run(api, wf_id, {"second": "accept"})
    assert ex["status"] == "completed" and ex["purposes"] == {"second": "coaching"}
    detail = api.ok("GET", f"/api/executions/{ex['execution_id']}")
    first = next(s for s in detail["steps"] if s["step_id"] == "first")
    assert first["status"] == "succeeded" and first.get("decision") is None
    # audited with who, the step and its evidence
    events = api.ok("GET", "/api/audit")["items"]
    promo = next(e for e in events if e["action"] == "step_promotion")
    assert promo["target_id"] == f"{wf_id}/first" and promo["after"]["mode"] == "auto"
    assert promo["after"]["auto_ready"] is True
    # back to coaching: suggested again
    api.ok("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "coaching"})
    assert _coaching_run(api, wf_id, {"first": "accept", "second": "accept"})["purposes"] == {
        "first": "coaching",
        "second": "coaching",
    }


def test_a_promoted_step_is_spot_checked_and_demoted_alone_on_evidence(make_api):
    api = make_api(spot_check_rate=1.0)
    wf_id = _ready_first_step(api)
    api.ok("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "auto"})
    # one early reject is not evidence
    ex = _coaching_run(api, wf_id, {"first": "reject", "second": "accept"})
    assert ex["purposes"] == {"first": "spot_check"}
    assert api.ok("GET", f"/api/workflows/{wf_id}")["step_modes"] == {"first": "auto"}
    _coaching_run(api, wf_id, {"first": "reject", "second": "accept"})
    wf = api.ok("GET", f"/api/workflows/{wf_id}")
    assert (wf["step_modes"], wf["mode"]) == ({}, "coaching")
    step = _metrics(api, wf_id)["steps"]["first"]
    assert step["mode"] == "coaching" and step["auto_ready"] is False
    assert (step["spot_checks"]["decisions"], step["spot_checks"]["rejected"]) == (2, 2)
    assert _step_mode(api, wf_id, "first", "auto")[0] == 409  # not ready again until new evidence says so
    demotion = next(e for e in api.ok("GET", "/api/audit")["items"] if e["action"] == "step_demotion")
    assert (demotion["actor"], demotion["target_id"]) == ("system", f"{wf_id}/first")
    # and it is suggested again
    assert _coaching_run(api, wf_id, {"first": "accept", "second": "accept"})["purposes"]["first"] == "coaching"


def test_a_pinned_step_is_decided_even_in_auto_and_no_promotion_overrides_the_pin(make_api):
    api = make_api(spot_check_rate=0.0)
    wf_id = _workflow(api, TWO)
    wf = api.ok("POST", f"/api/workflows/{wf_id}/steps/second/mode", {"mode": "always_review"})
    assert wf["step_modes"] == {"second": "always_review"}
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    assert api.ok("GET", f"/api/workflows/{wf_id}")["step_modes"] == {"second": "always_review"}
    code, body = _step_mode(api, wf_id, "second", "auto", force=True, reason="tests")
    assert code == 409 and "pinned" in body["error"]["message"]
    ex_id = api.start(wf_id, mode="auto")["execution_id"]
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision"
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert (sug["step_id"], sug["purpose"]) == ("second", "coaching")
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert api.settle(ex_id)["status"] == "completed"
    assert any(e["action"] == "step_pin" for e in api.ok("GET", "/api/audit")["items"])


def test_demoting_a_workflow_turns_its_waiting_spot_checks_into_reviews_and_its_runs_into_coaching(make_api):
    api = make_api(spot_check_rate=1.0)
    wf_id = _workflow(api, TWO, **QUICK)
    for _ in range(17):
        _coaching_run(api, wf_id, {"first": "accept", "second": "accept"})
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    runs = [api.start(wf_id, mode="auto")["execution_id"] for _ in range(3)]
    sugs = []
    for ex_id in runs:
        api.settle(ex_id)
        sugs.append(api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"])
    assert [s["purpose"] for s in sugs] == ["spot_check"] * 3
    for ex_id, sug in zip(runs[:2], sugs[:2], strict=False):
        api.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {"suggestion_id": sug["suggestion_id"], "decision": "reject", "feedback": "wrong"},
        )
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching"
    left = api.ok("GET", f"/api/executions/{runs[2]}/coaching/suggestion")["suggestion"]
    assert (left["suggestion_id"], left["purpose"]) == (sugs[2]["suggestion_id"], "coaching")
    api.ok(
        "POST",
        f"/api/executions/{runs[2]}/coaching/decision",
        {"suggestion_id": left["suggestion_id"], "decision": "accept"},
    )
    # the rest of that AUTO run is coached now: its next step is suggested, not spot-checked or run unattended
    assert api.settle(runs[2])["status"] == "waiting_decision"
    nxt = api.ok("GET", f"/api/executions/{runs[2]}/coaching/suggestion")["suggestion"]
    assert (nxt["step_id"], nxt["purpose"]) == ("second", "coaching")


def test_step_mode_bad_requests(make_api):
    api = make_api()
    wf_id = _workflow(api, TWO + [{"id": "ok", "type": "validation", "condition": "true"}])
    assert _step_mode(api, wf_id, "nope", "auto")[0] == 404
    assert _step_mode(api, "f" * 32, "first", "auto")[0] == 404
    code, body = _step_mode(api, wf_id, "ok", "always_review")
    assert code == 409 and body["error"]["details"]["type"] == "validation"
    code, body = _step_mode(api, wf_id, "first", "sometimes")
    assert code == 422 and "mode" in body["error"]["details"]
    assert api.call("POST", f"/api/workflows/{wf_id}/steps/first/mode", {})[0] == 422
    # forcing is for admins; leads are refused, operators may not change modes at all
    lead = {"Authorization": f"Bearer {make_user(api.services, 'lead@test.local', 'lead')}"}
    operator = {"Authorization": f"Bearer {make_user(api.services, 'op@test.local', 'operator')}"}
    assert (
        api.call(
            "POST",
            f"/api/workflows/{wf_id}/steps/first/mode",
            {"mode": "auto", "force": True, "reason": "tests"},
            headers=lead,
        )[0]
        == 403
    )
    assert (
        api.call("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "always_review"}, headers=operator)[0]
        == 403
    )
    assert (
        api.call("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "always_review"}, headers=lead)[0] == 200
    )
    assert api.ok(
        "POST",
        f"/api/workflows/{wf_id}/steps/first/mode",
        {"mode": "auto", "force": True, "reason": "tests"},
        status=409,
    )
    assert api.ok("GET", f"/api/workflows/{wf_id}")["step_modes"] == {"first": "always_review"}


def test_unattended_runs_use_what_the_correction_pack_learned(make_api):
    # the workflow earned its autonomy with the pack's suggestions: running unattended, it must run them too
    api = make_api(spot_check_rate=0.0)
    wf_id = _workflow(api, [{"id": "refund", "tool": "echo", "params": {"amount": 5, "currency": "EUR"}}])
    for _ in range(3):
        ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
        api.settle(ex_id)
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        api.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            {
                "suggestion_id": sug["suggestion_id"],
                "decision": "correct",
                "correction": {"amount": 5, "currency": "GBP"},
            },
        )
        api.settle(ex_id)
    api.ok("POST", f"/api/workflows/{wf_id}/steps/refund/mode", {"mode": "auto", "force": True, "reason": "tests"})
    ex = _coaching_run(api, wf_id, {})
    assert ex["status"] == "completed" and ex["purposes"] == {}
    assert ex["steps"][0]["output"] == {"amount": 5, "currency": "GBP"}, ex["steps"][0]
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    ex = api.settle(api.start(wf_id, mode="auto")["execution_id"])
    assert ex["steps"][0]["output"]["currency"] == "GBP"
    # a normal run is not coached: it runs the definition
    ex = api.settle(api.start(wf_id)["execution_id"])
    assert ex["steps"][0]["output"]["currency"] == "EUR"
