"""Check suggestions through the test client (issue #41, item 6; docs/autonomy.md#check-suggestions, docs/api.md):
with checks on, a coaching suggestion is shown with one param set to a value reviewers corrected away before; it never
runs, its decision is a miss (accept) or a catch (reject, correct, by hand) for its operator only, and the real
suggestion follows at once. Never in the step's acceptance, the session's stats or the correction pack. One
workspace's only, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from services.orm import utcnow
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "send", "tool": "echo", "params": {"to": "{{ vars.to }}", "n": 1}},
    {"id": "after", "tool": "echo", "params": {"done": "yes"}},
]
VARS = {"to": {"type": "string", "default": "team@example.com"}}
ANN, BOB = "ann@test.local", "bob@test.local"


class Always(random.Random):
    """Every draw is 0.0: each coaching suggestion the workspace's check_rate may make a check is one."""

    def random(self) -> float:
        return 0.0


@pytest.fixture
def drawn(services):
    """The runner draws checks (and spot checks) from `Always` during the test."""
    kept = services.runner.rng
    services.runner.rng = Always()
    yield
    services.runner.rng = kept


def _as(services, email: str, role: str = "operator") -> dict:
    return {"Authorization": f"Bearer {make_user(services, email, role)}"}


def _start(api, wf_id: str, to: str, **kwargs) -> tuple[str, dict]:
    ex_id = api.ok(
        "POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {"to": to}}, status=201, **kwargs
    )["execution_id"]
    if kwargs:  # another workspace's: api.settle reads as ours
        api.services.runner.wait_idle(30)
    else:
        api.settle(ex_id)
    return ex_id, api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion", **kwargs)["suggestion"]


def _decide(api, ex_id: str, sug: dict, kind: str, headers=None, **extra) -> dict:
    body = {"suggestion_id": sug["suggestion_id"], "decision": kind, **extra}
    return api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body, headers=headers)


@pytest.fixture
def corrected(api):
    """A workflow whose step `send` reviewers once corrected from to=wrong@example.com to right@example.com (checks
    off: a plain correction), the run then finished."""
    wf_id = api.workflow(STEPS, variables=VARS)["id"]
    ex_id, sug = _start(api, wf_id, "wrong@example.com")
    assert sug["purpose"] == "coaching"
    _decide(api, ex_id, sug, "correct", correction={"to": "right@example.com", "n": 1})
    api.settle(ex_id)
    after = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    _decide(api, ex_id, after, "accept")
    assert api.settle(ex_id)["status"] == "completed"
    return wf_id


def _checks_on(api, rate: float = 0.2, **extra) -> dict:
    return api.ok("PUT", "/api/workspace/reviews", {"check_rate": rate, **extra})


def _step(api, wf_id: str, step_id: str = "send") -> dict:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}")["steps"][step_id]


def _pack(api, wf_id: str) -> dict:
    (pack,) = [
        p for p in api.ok("GET", f"/api/correction-packs?workflow_id={wf_id}")["items"] if p["step_id"] == "send"
    ]
    return pack


def test_with_checks_on_a_suggestion_is_a_check_with_the_corrected_away_value(api, corrected, drawn):
    _checks_on(api)
    ex_id, sug = _start(api, corrected, "ops@example.com")
    assert sug["purpose"] == "check"
    # one param set to the value reviewers corrected away; the others as the real suggestion has them
    assert sug["params"] == {"to": "wrong@example.com", "n": 1}
    assert sug["definition_params"] == {"to": "ops@example.com", "n": 1}
    assert "check_change" not in sug and "wrong" not in sug["rationale"]
    # listed as a suggestion in the queue, like any other
    queue = api.ok("GET", "/api/coaching/queue?kind=suggestion")["items"]
    assert sug["suggestion_id"] in {item.get("suggestion_id") for item in queue}


def test_accepting_a_check_runs_nothing_says_miss_and_the_real_suggestion_follows(api, corrected, drawn, services):
    _checks_on(api)
    before = _step(api, corrected)
    pack_before = _pack(api, corrected)
    ex_id, check = _start(api, corrected, "ops@example.com")
    ann = _as(services, ANN)
    answer = _decide(api, ex_id, check, "accept", headers=ann)
    assert answer["check"]["result"] == "miss"
    assert (answer["check"]["param"], answer["check"]["shown"], answer["check"]["real"]) == (
        "to",
        "wrong@example.com",
        "ops@example.com",
    )
    assert "check" in answer["check"]["message"] and "miss" in answer["check"]["message"]
    # nothing ran: the step still waits, now for the real suggestion, which is never a check itself
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_decision"
    steps = {s["step_id"]: s for s in ex["steps"]} if isinstance(ex["steps"], list) else ex["steps"]
    assert steps["send"]["status"] == "waiting" and steps["send"].get("output") is None
    real = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert real["suggestion_id"] != check["suggestion_id"]
    assert (real["purpose"], real["params"]) == ("coaching", {"to": "ops@example.com", "n": 1})
    assert answer["execution"]["gate"]["suggestion_id"] == real["suggestion_id"]
    # the check counts nowhere but for ann: not the step's acceptance, the session's stats or the pack
    after = _step(api, corrected)
    for key in ("decisions", "accepted", "acceptance_rate"):
        assert after[key] == before[key], key
    assert after["suggestions"] == before["suggestions"] + 1  # the real one only
    assert answer["stats"]["accepted"] == 0 and answer["stats"]["suggestions_made"] == 1
    assert _pack(api, corrected)["corrections"] == pack_before["corrections"]
    # the real one runs when accepted
    _decide(api, ex_id, real, "accept", headers=ann)
    api.settle(ex_id)
    assert _step(api, corrected)["accepted"] == before["accepted"] + 1
    # audited check_result, with what was changed
    (event,) = api.ok("GET", "/api/audit?action=check_result")["items"]
    assert (event["actor"], event["result"]) == (ANN, "miss")
    assert event["before"]["check"] == {"param": "to", "shown": "wrong@example.com", "real": "ops@example.com"}
    # ann's check figures on the reviewers' route
    mine = {r["operator"]: r for r in api.ok("GET", f"/api/metrics/workflows/{corrected}/reviewers")["items"]}
    assert mine[ANN]["checks"]["checks"] == 1 and mine[ANN]["checks"]["misses"] == 1
    assert mine[ANN]["checks"]["catch_rate"] == 0.0 and mine[ANN]["checks"]["attentive"] is False
    # the check's accept is not among her decisions' times either: only the real one
    assert mine[ANN]["decisions"] == 1


@pytest.mark.parametrize(
    "kind, extra",
    [
        ("reject", {"feedback": "wrong address"}),
        ("correct", {"correction": {"to": "ops@example.com", "n": 1}}),
        ("manual", {"manual_output": {"sent": True}}),
    ],
)
def test_rejecting_correcting_or_doing_a_check_by_hand_is_a_catch(api, corrected, drawn, services, kind, extra):
    _checks_on(api)
    before, pack_before = _step(api, corrected), _pack(api, corrected)
    ex_id, check = _start(api, corrected, "ops@example.com")
    answer = _decide(api, ex_id, check, kind, headers=_as(services, BOB), **extra)
    assert answer["check"]["result"] == "catch"
    real = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert real["purpose"] == "coaching" and real["params"]["to"] == "ops@example.com"
    after = _step(api, corrected)
    for key in ("decisions", "rejected", "corrected", "manual"):
        assert after[key] == before[key], key
    assert after["suggestions"] == before["suggestions"] + 1
    assert _pack(api, corrected)["corrections"] == pack_before["corrections"]
    row = {r["operator"]: r for r in api.ok("GET", f"/api/metrics/workflows/{corrected}/reviewers")["items"]}
    # bob decided the check only: listed, with no decision of the workflow's, and his catch
    assert (row[BOB]["decisions"], row[BOB]["median_ms"]) == (0, None)
    assert row[BOB]["checks"]["catches"] == 1 and row[BOB]["checks"]["catch_rate"] == 1.0


def test_skipping_a_check_is_no_outcome(api, corrected, drawn, services):
    _checks_on(api)
    ex_id, check = _start(api, corrected, "ops@example.com")
    answer = _decide(api, ex_id, check, "skip", headers=_as(services, ANN))
    assert answer["check"]["result"] is None
    assert api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]["purpose"] == "coaching"
    row = {r["operator"]: r for r in api.ok("GET", f"/api/metrics/workflows/{corrected}/reviewers")["items"]}
    assert row[ANN]["checks"]["checks"] == 0 and row[ANN]["checks"]["catch_rate"] is None


def test_no_check_without_a_corrected_away_value_or_with_checks_off(api, drawn):
    wf_id = api.workflow(STEPS, variables=VARS)["id"]
    _checks_on(api)
    _, sug = _start(api, wf_id, "ops@example.com")  # nothing was ever corrected: nothing to check with
    assert sug["purpose"] == "coaching"


def test_checks_are_off_by_default(api, corrected, drawn):
    assert api.ok("GET", "/api/workspace/reviews")["check_rate"] == 0.0
    _, sug = _start(api, corrected, "ops@example.com")
    assert sug["purpose"] == "coaching"


def test_a_value_equal_to_the_real_one_is_no_check(api, corrected, drawn):
    _checks_on(api)
    _, sug = _start(api, corrected, "wrong@example.com")  # the real suggestion holds the corrected-away value
    assert sug["purpose"] == "coaching"


@pytest.mark.parametrize(
    "body",
    [
        {"check_rate": 0.3},
        {"check_rate": -0.1},
        {"check_rate": "0.1"},
        {"check_rate": True},
        {"evidence_from": "some"},
        {"min_catch_rate": 1.5},
        {"max_fast_share": -1},
        {"min_checks": 0},
        {"min_checks": 2.5},
        {"check_rate": 0.1, "unknown": 1},
        {},
    ],
)
def test_bad_check_settings_are_a_422(api, body):
    code, answer = api.call("PUT", "/api/workspace/reviews", body)
    assert code == 422, answer
    settings = api.ok("GET", "/api/workspace/reviews")
    assert (settings["check_rate"], settings["evidence_from"]) == (0.0, "all")


def test_leads_set_the_check_settings_audited_and_operators_read_them(api, services):
    lead, ann = _as(services, "lead@test.local", "lead"), _as(services, ANN)
    code, _ = api.call("PUT", "/api/workspace/reviews", {"check_rate": 0.1}, headers=ann)
    assert code == 403
    got = api.ok(
        "PUT",
        "/api/workspace/reviews",
        {
            "check_rate": 0.1,
            "evidence_from": "attentive",
            "min_checks": 3,
            "min_catch_rate": 0.9,
            "max_fast_share": 0.2,
        },
        headers=lead,
    )
    assert (
        got["check_rate"],
        got["evidence_from"],
        got["min_checks"],
        got["min_catch_rate"],
        got["max_fast_share"],
    ) == (0.1, "attentive", 3, 0.9, 0.2)
    assert got["workspace"] is False and got["attentive_floor_ms"] == 1500  # the floor untouched
    assert api.ok("GET", "/api/workspace/reviews", headers=ann)["evidence_from"] == "attentive"
    (event,) = api.ok("GET", "/api/audit?action=review_settings")["items"]
    assert event["actor"] == "lead@test.local"
    assert event["before"]["check_rate"] == 0.0 and event["after"]["check_rate"] == 0.1
    assert api.ok("GET", "/api/audit?action=attentive_floor")["items"] == []
    # null: back to the default, one setting at a time
    back = api.ok("PUT", "/api/workspace/reviews", {"check_rate": None, "evidence_from": None}, headers=lead)
    assert (back["check_rate"], back["evidence_from"], back["min_checks"]) == (0.0, "all", 3)


def test_another_workspace_sees_nothing_of_the_checks(api, corrected, drawn, services):
    _checks_on(api)
    ex_id, check = _start(api, corrected, "ops@example.com")
    _decide(api, ex_id, check, "reject", headers=_as(services, ANN))
    other = {"Authorization": f"Bearer {make_user(services, 'admin@other.test', 'admin', 'other')}"}
    assert api.ok("GET", "/api/workspace/reviews", headers=other)["check_rate"] == 0.0
    assert api.ok("GET", "/api/audit?action=check_result", headers=other)["items"] == []
    code, _ = api.call("GET", f"/api/metrics/workflows/{corrected}/reviewers", headers=other)
    assert code == 404
    # its own workflow of the same shape, with its own correction, is never checked: its check_rate is 0
    own = api.ok(
        "POST", "/api/workflows", {"name": "theirs", "steps": STEPS, "variables": VARS}, status=201, headers=other
    )["id"]
    theirs, sug = _start(api, own, "wrong@example.com", headers=other)
    api.ok(
        "POST",
        f"/api/executions/{theirs}/coaching/decision",
        {
            "suggestion_id": sug["suggestion_id"],
            "decision": "correct",
            "correction": {"to": "right@example.com", "n": 1},
        },
        headers=other,
    )
    _, again = _start(api, own, "ops@example.com", headers=other)
    assert again["purpose"] == "coaching"


def _accept_real(api, ex_id: str, headers) -> None:
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["purpose"] == "coaching"
    _decide(api, ex_id, sug, "accept", headers=headers)
    api.settle(ex_id)


def test_evidence_from_attentive_leaves_a_non_attentive_operators_accepts_out_of_readiness(api, corrected, services):
    ann, bob = _as(services, ANN), _as(services, BOB)
    before = _step(api, corrected)
    assert (before["evidence_decisions"], before["attentive_decisions"]) == (1, 0)  # the fixture's correction
    workflow_before = api.ok("GET", f"/api/metrics/workflows/{corrected}")["evidence_decisions"]
    api.ok("PUT", "/api/workspace/reviews", {"evidence_from": "attentive", "min_checks": 1})
    # ann never had a check: not attentive. Her accepts count for the step's acceptance, not in its readiness test
    for _ in range(3):
        ex_id, sug = _start(api, corrected, "ops@example.com")
        _decide(api, ex_id, sug, "accept", headers=ann)
        api.settle(ex_id)
    step = _step(api, corrected)
    assert step["accepted"] == before["accepted"] + 3 and step["decisions"] == before["decisions"] + 3
    assert (step["evidence_decisions"], step["attentive_decisions"]) == (1, 0)
    assert step["evidence"]["counted_since_restart"] == 1
    whole = api.ok("GET", f"/api/metrics/workflows/{corrected}")
    assert whole["evidence_from"] == "attentive" and whole["evidence_decisions"] == workflow_before
    assert whole["accepted"] == 4  # the fixture's accept of `after`, ann's three
    trail = api.ok("GET", f"/api/metrics/workflows/{corrected}/steps/send/decisions")["items"]
    assert [(d["operator"], d["counted"], d["evidence"]) for d in trail[:3]] == [(ANN, False, None)] * 3
    # bob catches a check (min_checks 1): attentive, and his accept is readiness evidence
    api.ok("PUT", "/api/workspace/reviews", {"check_rate": 0.2})
    kept, services.runner.rng = services.runner.rng, Always()
    try:
        ex_id, check = _start(api, corrected, "ops@example.com")
    finally:
        services.runner.rng = kept
    assert check["purpose"] == "check"
    _decide(api, ex_id, check, "reject", headers=bob)
    _accept_real(api, ex_id, bob)
    step = _step(api, corrected)
    assert (step["evidence_decisions"], step["attentive_decisions"]) == (2, 1)
    assert step["accepted"] == before["accepted"] + 4
    rows = {r["operator"]: r for r in api.ok("GET", f"/api/metrics/workflows/{corrected}/reviewers")["items"]}
    assert rows[ANN]["checks"]["attentive"] is False
    # bob was attentive when he accepted; that accept came within the floor (the test client is quick), so one
    # fast accept of one is now over the 0.5 bar: his next decisions are not evidence until he slows down
    assert (rows[BOB]["checks"]["catches"], rows[BOB]["checks"]["fast_accepts"]) == (1, 1)
    assert rows[BOB]["checks"]["attentive"] is False
    trail = api.ok("GET", f"/api/metrics/workflows/{corrected}/steps/send/decisions")["items"]
    assert (trail[0]["operator"], trail[0]["counted"], trail[0]["attentive"]) == (BOB, True, True)
    assert trail[0]["evidence"] is not None


def test_with_every_decision_as_evidence_the_snapshot_still_says_how_many_were_attentive(api, corrected, services):
    api.ok("PUT", "/api/workspace/reviews", {"min_checks": 1, "check_rate": 0.1})  # evidence_from: all
    before = _step(api, corrected)
    ex_id, sug = _start(api, corrected, "ops@example.com")  # the runner's own seeded draws: maybe a check
    while sug["purpose"] == "check":
        _decide(api, ex_id, sug, "skip")
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    _decide(api, ex_id, sug, "accept", headers=_as(services, ANN))
    api.settle(ex_id)
    step = _step(api, corrected)
    assert (step["evidence_decisions"], step["attentive_decisions"]) == (before["evidence_decisions"] + 1, 0)


def test_a_checks_deadline_accepting_runs_the_real_params_never_the_checks(api, services, drawn):
    timed = [{**STEPS[0], "human_timeout_s": 60, "on_human_timeout": "accept"}]
    wf_id = api.workflow(timed, variables=VARS)["id"]
    ex_id, sug = _start(api, wf_id, "wrong@example.com")
    _decide(api, ex_id, sug, "correct", correction={"to": "right@example.com", "n": 1})
    api.settle(ex_id)
    _checks_on(api)
    ex_id, check = _start(api, wf_id, "ops@example.com")
    assert check["purpose"] == "check" and check["on_timeout"] == "accept"
    assert services.runner.scans.fire_due(utcnow() + timedelta(seconds=120)) == 1
    ex = api.settle(ex_id)
    assert ex["status"] == "completed", ex
    steps = {s["step_id"]: s for s in ex["steps"]} if isinstance(ex["steps"], list) else ex["steps"]
    assert steps["send"]["output"] == {"to": "ops@example.com", "n": 1}  # what the real suggestion held
    assert api.ok("GET", "/api/audit?action=check_result")["items"] == []  # nobody decided it: no outcome
