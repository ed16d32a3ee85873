"""Learning metrics through /api/metrics (docs/design.md#metrics-and-learning-levels), promotion to AUTO, and demotion
by spot checks."""

from __future__ import annotations

from collections import Counter

import pytest

from core.coaching.counters import wilson_lower_bound
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

TWO_STEPS = [
    {"id": "first", "tool": "echo", "params": {"v": "one"}, "on_reject": "stop"},
    {"id": "second", "tool": "echo", "params": {"v": "two"}, "on_reject": "stop"},
]
ONE_STEP = TWO_STEPS[:1]
# 10 decisions, all five kinds; with TWO_STEPS: 5 executions, the 4th fails on the reject
PLAN = ["accept", "accept", "correct", "accept", "manual", "skip", "accept", "reject", "accept", "accept"]
ATTR = {"accept": "accepted", "reject": "rejected", "correct": "corrected", "manual": "manual", "skip": "skipped"}


def _expected(kinds: list[str]) -> dict:
    c = Counter(kinds)
    counted = len(kinds) - c["skip"]
    return {
        "decisions": len(kinds),
        **{ATTR[k]: c[k] for k in ATTR},
        "acceptance_rate": round(c["accept"] / counted, 4) if counted else 0.0,
    }


def _subset(snapshot: dict, expected: dict) -> dict:
    return {k: snapshot[k] for k in expected}


def _drive(
    api, wf_id: str, kinds: list[str], operators: list[str] | None = None, ex_id: str | None = None
) -> tuple[list[str], str | None]:
    """Decide `kinds` in order, starting coaching executions as they finish (or going on with `ex_id`);
    returns the step ids decided and the execution still waiting, if any."""
    decided = []
    for i, kind in enumerate(kinds):
        if ex_id is None:
            ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
                "execution_id"
            ]
            api.settle(ex_id)
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        assert sug is not None, f"decision {i}: nothing to decide"
        body = {"suggestion_id": sug["suggestion_id"], "decision": kind}
        if kind == "correct":
            body["correction"] = {"v": "fixed"}
        headers = {"Authorization": f"Bearer {make_user(api.services, operators[i], 'operator')}"} if operators else {}
        api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body, headers=headers)
        decided.append(sug["step_id"])
        if api.settle(ex_id)["status"] != "waiting_decision":
            ex_id = None
    return decided, ex_id


def _metrics(api, wf_id: str) -> dict:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}")


def _workflow(api, steps=ONE_STEP, **thresholds) -> str:
    wf_id = api.workflow(steps)["id"]
    if thresholds:
        api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", thresholds)
    return wf_id


def test_workflow_step_operator_and_global_metrics_after_a_known_sequence(api):
    wf_id = _workflow(api, TWO_STEPS)
    operators = ["ann@test.local"] * 4 + ["bob@test.local"] * 6
    assert _metrics(api, wf_id)["level"] == "OBSERVATION"

    steps, ex_id = _drive(api, wf_id, PLAN[:9], operators)
    assert ex_id is not None
    m = _metrics(api, wf_id)
    assert (m["decisions"], m["level"], m["auto_ready"]) == (9, "OBSERVATION", False)

    more, ex_id = _drive(api, wf_id, PLAN[9:], operators[9:], ex_id)
    steps += more
    assert ex_id is None
    assert steps == ["first", "second"] * 5
    m = _metrics(api, wf_id)
    expected = _expected(PLAN)
    assert expected == {
        "decisions": 10,
        "accepted": 6,
        "rejected": 1,
        "corrected": 1,
        "manual": 1,
        "skipped": 1,
        "acceptance_rate": 0.6667,
    }
    assert _subset(m, expected) == expected
    assert m["workflow_id"] == wf_id and m["mode"] == "coaching"
    assert (m["level"], m["auto_ready"]) == ("COACHING", False)
    assert m["suggestions"] == 10
    assert m["rolling_acceptance_rate"] == 0.6667  # the default window (50) holds every decision
    assert m["confidence"] == round(wilson_lower_bound(6, 9), 4)
    assert 0 < m["confidence"] < m["rolling_acceptance_rate"]
    latency = m["decision_latency_ms"]
    assert isinstance(latency["p50"], int) and isinstance(latency["p90"], int) and latency["p90"] >= latency["p50"]

    assert set(m["steps"]) == {"first", "second"}
    for step_id in ("first", "second"):
        kinds = [k for k, s in zip(PLAN, steps, strict=False) if s == step_id]
        assert _subset(m["steps"][step_id], _expected(kinds)) == _expected(kinds)

    operators_body = {o["operator"]: o for o in api.ok("GET", "/api/metrics/operators")["items"]}
    assert set(operators_body) == {"ann@test.local", "bob@test.local"}
    for name in ("ann@test.local", "bob@test.local"):
        kinds = [k for k, who in zip(PLAN, operators, strict=False) if who == name]
        assert _subset(operators_body[name], _expected(kinds)) == _expected(kinds)

    glob = api.ok("GET", "/api/metrics/global")
    assert _subset(glob, expected) == expected
    assert glob["workflows"] == 1 and glob["levels"] == {"COACHING": 1} and glob["auto_ready_workflows"] == 0

    for series in (m["series"], glob["series"]):
        assert series, "a bucket holds the decisions just made"
        totals = {
            k: sum(b[k] for b in series)
            for k in ("decisions", "accepted", "rejected", "corrected", "manual", "skipped")
        }
        assert totals == {k: expected[k] for k in totals}

    # a suggestion's confidence is its step's: "first" was accepted 3 times of 5 counted
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["confidence"] == m["steps"]["first"]["confidence"] == round(wilson_lower_bound(3, 5), 4)

    # rolling is over the window only: the last 5 are skip, accept, reject, accept, accept
    api.ok("PUT", f"/api/workflows/{wf_id}/thresholds", {"window": 5, "auto_min_window": 5})
    m = _metrics(api, wf_id)
    assert (m["acceptance_rate"], m["rolling_acceptance_rate"]) == (0.6667, 0.75)
    assert m["confidence"] == round(wilson_lower_bound(3, 4), 4)
    assert (m["window_size"], m["window_decisions"], m["decisions"]) == (5, 5, 10)
    assert (m["level"], m["auto_ready"]) == ("COACHING", False)


def test_the_current_version_counts_only_its_own_decisions(api):
    wf_id = _workflow(api)
    _drive(api, wf_id, ["accept", "accept", "correct"])
    v1 = _metrics(api, wf_id)["current_version"]
    assert v1["version"] == 1 and _subset(v1, _expected(["accept", "accept", "correct"])) == _expected(
        ["accept", "accept", "correct"]
    )
    updated = api.ok("PUT", f"/api/workflows/{wf_id}", {"name": "wf", "steps": ONE_STEP})
    assert updated["version"] == 2
    _drive(api, wf_id, ["reject", "accept"])
    m = _metrics(api, wf_id)
    assert m["current_version"]["version"] == 2
    assert _subset(m["current_version"], _expected(["reject", "accept"])) == _expected(["reject", "accept"])
    everything = ["accept", "accept", "correct", "reject", "accept"]
    assert _subset(m, _expected(everything)) == _expected(everything)


def test_the_workflow_list_has_every_workflow_with_its_level(api):
    busy, idle = _workflow(api), _workflow(api)
    _drive(api, busy, ["accept", "skip"])
    items = {w["workflow_id"]: w for w in api.ok("GET", "/api/metrics/workflows")["items"]}
    assert set(items) == {busy, idle}
    assert (items[busy]["decisions"], items[busy]["accepted"], items[busy]["skipped"]) == (2, 1, 1)
    assert items[busy]["acceptance_rate"] == 1.0
    assert (items[idle]["decisions"], items[idle]["level"], items[idle]["mode"]) == (0, "OBSERVATION", "coaching")


def test_promotion_is_refused_when_not_ready_unless_forced(api):
    wf_id = _workflow(api)
    code, body = api.call("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    assert code == 409 and body["error"]["code"] == "conflict"
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching"
    forced = api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    assert forced["mode"] == "auto"
    m = _metrics(api, wf_id)
    assert (m["mode"], m["level"], m["auto_ready"]) == ("auto", "OBSERVATION", False)
    assert api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "coaching"})["mode"] == "coaching"


def test_promotion_without_force_once_auto_ready(api):
    # a lenient setting (acceptance >= 50% at level 0.2) so that a few accepts are evidence: 4 in a row are
    # (e-value 6.2 >= 1/0.2), 3 are not (3.75)
    wf_id = _workflow(api, coaching_after=2, auto_min_window=3, window=5, auto_acceptance=0.5, auto_alpha=0.2)
    _drive(api, wf_id, ["accept", "accept", "accept"])
    m = _metrics(api, wf_id)
    assert (m["level"], m["auto_ready"]) == ("COACHING", False)
    assert m["evidence"]["decisions_needed_if_all_accepted"] == 1
    assert m["evidence"]["threshold"] == 5.0 and m["evidence"]["test"]
    assert api.call("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})[0] == 409
    _drive(api, wf_id, ["accept"])
    m = _metrics(api, wf_id)
    assert (m["level"], m["auto_ready"], m["mode"]) == ("AUTO", True, "coaching")
    assert m["evidence"]["decisions_needed_if_all_accepted"] == 0
    assert m["steps"]["first"]["evidence"]["decisions_needed_if_all_accepted"] == 0
    promoted = api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    assert (promoted["mode"], promoted["level"], promoted["auto_ready"]) == ("auto", "AUTO", True)
    assert _metrics(api, wf_id)["mode"] == "auto"


def test_an_auto_execution_of_a_workflow_not_in_auto_is_409(api):
    wf_id = _workflow(api)
    code, body = api.call("POST", "/api/executions/", {"workflow_id": wf_id, "variables": {}, "mode": "auto"})
    assert code == 409 and body["error"]["code"] == "conflict"
    assert api.ok("GET", "/api/executions/")["total"] == 0


def _spot_check(api, wf_id: str, decision: str) -> None:
    ex_id = api.start(wf_id, mode="auto")["execution_id"]
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision" and ex["mode"] == "auto"
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert (sug["purpose"], sug["step_id"], sug["status"]) == ("spot_check", "first", "pending")
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": decision, "feedback": "wrong"},
    )
    api.settle(ex_id)


def test_rejected_spot_checks_demote_the_workflow_once_they_are_evidence(make_api):
    api = make_api(spot_check_rate=1.0)
    # at level 0.2, 17 accepts in a row are evidence of acceptance >= 85%, and two rejects in a row of a drop
    wf_id = _workflow(api, auto_alpha=0.2, coaching_after=2, auto_min_window=3, window=5)
    _drive(api, wf_id, ["accept"] * 17)
    m = _metrics(api, wf_id)
    assert m["auto_ready"] is True, (m.get("evidence"), m["to_auto"], m["level"])
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})
    # one early reject is not evidence (the change detector stands at 0.85 of log 5 = 1.61)
    _spot_check(api, wf_id, "reject")
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "auto"
    _spot_check(api, wf_id, "reject")
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching"
    m = _metrics(api, wf_id)
    assert m["mode"] == "coaching"
    assert (m["spot_checks"]["decisions"], m["spot_checks"]["rejected"]) == (2, 2)
    # no longer AUTO-ready until new evidence says so (the rejects alone would not have undone 4 accepts)
    assert (m["auto_ready"], m["evidence"]["counted_since_restart"]) == (False, 0)
    assert api.call("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto"})[0] == 409
    assert api.call("POST", "/api/executions/", {"workflow_id": wf_id, "mode": "auto"})[0] == 409


def test_accepted_spot_checks_keep_the_workflow_in_auto(make_api):
    api = make_api(spot_check_rate=1.0)
    wf_id = _workflow(api)
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    ex_id = api.start(wf_id, mode="auto")["execution_id"]
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["purpose"] == "spot_check"
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert api.settle(ex_id)["status"] == "completed"
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "auto"


def test_thresholds_that_contradict_each_other_are_422_naming_the_fields_sent(api):
    wf_id = _workflow(api)
    for sent in ({"window": 10, "auto_min_window": 11}, {"window": 5}):  # the default auto_min_window is 20
        code, body = api.call("PUT", f"/api/workflows/{wf_id}/thresholds", sent)
        assert code == 422 and set(body["error"]["details"]) == set(sent), body
    assert api.ok("GET", f"/api/workflows/{wf_id}")["thresholds"]["window"] == 50


@pytest.mark.parametrize("alpha", [0, 0.5, 0.9, -0.01, "often"])
def test_an_auto_alpha_outside_0_to_half_is_422_naming_it(api, alpha):
    wf_id = _workflow(api)
    code, body = api.call("PUT", f"/api/workflows/{wf_id}/thresholds", {"auto_alpha": alpha})
    assert code == 422 and "auto_alpha" in body["error"]["details"], body
    assert api.ok("GET", f"/api/workflows/{wf_id}")["thresholds"]["auto_alpha"] == 0.05


def test_auto_alpha_is_a_workflow_threshold(api):
    wf_id = _workflow(api, auto_alpha=0.01)
    assert api.ok("GET", f"/api/workflows/{wf_id}")["thresholds"]["auto_alpha"] == 0.01
    assert _metrics(api, wf_id)["evidence"]["threshold"] == 100.0


def test_each_operator_has_a_time_series_of_their_own_decisions(api):
    # docs/api.md: the metrics endpoints, /operators included, come "with time series for charts"
    wf_id = _workflow(api, TWO_STEPS)
    operators = ["ann@test.local"] * 3 + ["bob@test.local"] * 2
    _drive(api, wf_id, PLAN[:5], operators)
    items = {o["operator"]: o for o in api.ok("GET", "/api/metrics/operators")["items"]}
    for name in ("ann@test.local", "bob@test.local"):
        kinds = [k for k, who in zip(PLAN, operators, strict=False) if who == name]
        series = items[name]["series"]
        assert series and all("bucket" in b for b in series)
        totals = {k: sum(b[k] for b in series) for k in _expected(kinds) if k != "acceptance_rate"}
        assert totals == {k: v for k, v in _expected(kinds).items() if k != "acceptance_rate"}
