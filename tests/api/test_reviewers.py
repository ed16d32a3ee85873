"""Evidence from attentive reviews through the test client (issue #41, item 6; docs/api.md, docs/autonomy.md): the
workspace's floor (`/api/workspace/reviews`) and each operator's time to decide and fast accepts
(`GET /api/metrics/workflows/<id>/reviewers`), per workflow and per step, one workspace's only, on SQLite and
PostgreSQL. Bad input is a 4xx, never a 500."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from services.models.coaching import Decision, Suggestion
from services.orm import utcnow
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

TWO_STEPS = [
    {"id": "first", "tool": "echo", "params": {"v": "one"}},
    {"id": "second", "tool": "echo", "params": {"v": "two"}},
]
ANN, BOB = "ann@test.local", "bob@test.local"


def _as(services, email: str, role: str = "operator") -> dict:
    return {"Authorization": f"Bearer {make_user(services, email, role)}"}


def _took(services, suggestion_id: str, latency_ms: float) -> None:
    """History: the decision on this suggestion as if it had taken `latency_ms` (what the server measured)."""
    with services.db.transaction() as session:
        session.execute(update(Decision).where(Decision.suggestion_id == suggestion_id).values(latency_ms=latency_ms))


def _shown_ago(services, suggestion_id: str, seconds: float) -> None:
    """The suggestion as if shown `seconds` ago: the server measures the decision's latency from then."""
    with services.db.transaction() as session:
        session.execute(
            update(Suggestion)
            .where(Suggestion.id == suggestion_id)
            .values(created_at=utcnow() - timedelta(seconds=seconds))
        )


def _decide_all(api, wf_id: str, plan: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Decide `plan` [(kind, operator)] in order through the REST API, starting coaching executions as they
    finish; returns each decision's (step id, suggestion id)."""
    decided, ex_id = [], None
    for kind, who in plan:
        if ex_id is None:
            ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
                "execution_id"
            ]
            api.settle(ex_id)
        sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
        body = {"suggestion_id": sug["suggestion_id"], "decision": kind}
        if kind == "correct":
            body["correction"] = {"v": "fixed"}
        api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body, headers=_as(api.services, who))
        decided.append((sug["step_id"], sug["suggestion_id"]))
        if api.settle(ex_id)["status"] != "waiting_decision":
            ex_id = None
    return decided


def _reviewers(api, wf_id: str, query: str = "", **kwargs) -> dict:
    return api.ok("GET", f"/api/metrics/workflows/{wf_id}/reviewers{query}", **kwargs)


def _by_operator(body: dict) -> dict[str, dict]:
    return {r["operator"]: r for r in body["items"]}


# ann: 4 decisions on `first` and `second` alternately; bob: 4. Latencies (ms) chosen per decision.
PLAN = [
    ("accept", ANN),
    ("accept", ANN),
    ("accept", BOB),
    ("accept", BOB),
    ("reject", ANN),
    ("accept", ANN),
    ("accept", BOB),
    ("correct", BOB),
]
LATENCY = [400, 3000, 200, 100, 5000, 1400, 1600, 7000]


@pytest.fixture
def known(api):
    """A two-step workflow with the eight decisions of PLAN, each taking its LATENCY."""
    wf_id = api.workflow(TWO_STEPS)["id"]
    decided = _decide_all(api, wf_id, PLAN)
    for (_, suggestion_id), ms in zip(decided, LATENCY, strict=False):
        _took(api.services, suggestion_id, ms)
    return wf_id, decided


def test_each_operators_time_to_decide_and_fast_accepts_for_a_known_set_of_decisions(api, known):
    wf_id, decided = known
    # the steps alternate: first, second, first, second … (a rejected `first` stops its execution)
    steps = [s for s, _ in decided]
    assert set(steps) == {"first", "second"}

    body = _reviewers(api, wf_id)
    assert (body["workflow_id"], body["step_id"], body["floor_ms"], body["days"]) == (wf_id, None, 1500, 30)
    assert body["decisions"] == 8 and body["scopes"] == ["first", "second"]
    assert [r["operator"] for r in body["items"]] == [ANN, BOB]
    ann, bob = _by_operator(body)[ANN], _by_operator(body)[BOB]
    # no check suggestions yet (tests/api/test_checks.py): their check figures are empty
    assert ann.pop("checks")["checks"] == bob.pop("checks")["checks"] == 0
    # ann: 400 3000 5000 1400 -> sorted 400 1400 3000 5000; accepts 400 3000 1400 (400 and 1400 under 1500)
    assert ann == {
        "operator": ANN,
        "decisions": 4,
        "accepts": 3,
        "median_ms": 2200.0,
        "p90_ms": 5000.0,
        "fast_accepts": 2,
        "fast_accept_share": 0.6667,
    }
    # bob: 200 100 1600 7000; accepts 200 100 1600 (200 and 100 under 1500)
    assert bob == {
        "operator": BOB,
        "decisions": 4,
        "accepts": 3,
        "median_ms": 900.0,
        "p90_ms": 7000.0,
        "fast_accepts": 2,
        "fast_accept_share": 0.6667,
    }

    # one step: its decisions only
    expected: dict[str, list[tuple[str, int]]] = {}
    for (kind, who), step, ms in zip(PLAN, steps, LATENCY, strict=False):
        if step == "first":
            expected.setdefault(who, []).append((kind, ms))
    first = _reviewers(api, wf_id, "?step_id=first")
    assert first["step_id"] == "first" and first["decisions"] == steps.count("first")
    for who, found in expected.items():
        row = _by_operator(first)[who]
        assert row["decisions"] == len(found)
        assert row["accepts"] == sum(1 for k, _ in found if k == "accept")
        assert row["fast_accepts"] == sum(1 for k, ms in found if k == "accept" and ms < 1500)


def test_the_floor_the_lead_sets_decides_which_accepts_are_fast(api, known, services):
    wf_id, _ = known
    settings = api.ok("GET", "/api/workspace/reviews")
    assert {k: settings[k] for k in ("attentive_floor_ms", "default_ms", "min_ms", "max_ms", "workspace")} == {
        "attentive_floor_ms": 1500,
        "default_ms": 1500,
        "min_ms": 100,
        "max_ms": 600000,
        "workspace": False,
    }
    lead = _as(services, "lead@test.local", "lead")
    assert api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 3500}, headers=lead)["workspace"] is True
    # every member reads it
    assert api.ok("GET", "/api/workspace/reviews", headers=_as(services, ANN))["attentive_floor_ms"] == 3500
    body = _reviewers(api, wf_id)
    assert body["floor_ms"] == 3500
    ann, bob = _by_operator(body)[ANN], _by_operator(body)[BOB]
    assert (ann["fast_accepts"], ann["fast_accept_share"]) == (3, 1.0)  # 400 3000 1400
    assert (bob["fast_accepts"], bob["fast_accept_share"]) == (3, 1.0)  # 200 100 1600
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 150}, headers=lead)
    bob = _by_operator(_reviewers(api, wf_id))[BOB]
    assert (bob["fast_accepts"], bob["fast_accept_share"]) == (1, 0.3333)  # 100 only
    # audited, and back to the default with null
    events = api.ok("GET", "/api/audit?action=attentive_floor")["items"]
    assert [(e["actor"], e["after"]["attentive_floor_ms"]) for e in events][:2] == [
        ("lead@test.local", 150),
        ("lead@test.local", 3500),
    ]
    assert api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": None})["attentive_floor_ms"] == 1500
    assert _reviewers(api, wf_id)["floor_ms"] == 1500


def test_the_server_measures_the_time_to_decide_from_when_the_suggestion_was_shown(api, services):
    wf_id = api.workflow(TWO_STEPS[:1])["id"]
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 600000})  # ten minutes
    slow = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
    api.settle(slow)
    sug = api.ok("GET", f"/api/executions/{slow}/coaching/suggestion")["suggestion"]
    _shown_ago(services, sug["suggestion_id"], 3600)  # shown an hour ago: a slow, considered accept
    api.ok(
        "POST",
        f"/api/executions/{slow}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    quick = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
    api.settle(quick)
    sug = api.ok("GET", f"/api/executions/{quick}/coaching/suggestion")["suggestion"]
    api.ok(
        "POST",
        f"/api/executions/{quick}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    (me,) = _reviewers(api, wf_id)["items"]
    assert (me["operator"], me["decisions"], me["accepts"]) == ("admin@test.local", 2, 2)
    # the quick one was decided within ten minutes of being shown; the other an hour after
    assert (me["fast_accepts"], me["fast_accept_share"]) == (1, 0.5)
    assert me["p90_ms"] >= 3_600_000
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": None})


def test_only_the_last_days_decisions_count(api, known, services):
    wf_id, decided = known
    with services.db.transaction() as session:  # ann's first decision as if made 40 days ago
        session.execute(
            update(Decision)
            .where(Decision.suggestion_id == decided[0][1])
            .values(created_at=utcnow() - timedelta(days=40))
        )
    assert _by_operator(_reviewers(api, wf_id))[ANN]["decisions"] == 3
    assert _reviewers(api, wf_id, "?days=30")["decisions"] == 7
    assert _by_operator(_reviewers(api, wf_id, "?days=41"))[ANN]["decisions"] == 4


def test_a_workflow_without_decisions_has_no_reviewers_yet(api):
    wf_id = api.workflow(TWO_STEPS)["id"]
    body = _reviewers(api, wf_id)
    assert (body["items"], body["decisions"], body["scopes"]) == ([], 0, ["first", "second"])
    assert _reviewers(api, wf_id, "?step_id=second")["items"] == []


@pytest.mark.parametrize(
    "query, status",
    [
        ("?step_id=nope", 404),  # no such step
        ("?step_id=first:echo", 404),  # `first` is no agent step: it has no tools of its own
        ("?step_id=ask", 404),  # a human_input step: nobody decides suggestions of it
        ("?step_id=", 422),
        ("?step_id=" + "x" * 201, 422),
        ("?days=0", 422),
        ("?days=366", 422),
        ("?days=abc", 422),
    ],
)
def test_bad_input_to_the_reviewers_is_a_4xx_saying_what(api, query, status):
    wf_id = api.workflow([*TWO_STEPS, {"id": "ask", "type": "human_input", "question": "Go?"}])["id"]
    code, body = api.call("GET", f"/api/metrics/workflows/{wf_id}/reviewers{query}")
    assert code == status, body
    assert body["error"]["message"]
    if status == 404:
        assert body["error"]["details"]["steps"] == ["first", "second"]


@pytest.mark.parametrize("floor", [99, 600001, -1, 0, 1500.5, "1500", True, [1500], {"ms": 1}])
def test_a_floor_out_of_bounds_or_not_whole_milliseconds_is_a_422(api, floor):
    code, body = api.call("PUT", "/api/workspace/reviews", {"attentive_floor_ms": floor})
    assert code == 422, body
    assert "attentive_floor_ms" in str(body["error"]["details"])
    assert api.ok("GET", "/api/workspace/reviews")["attentive_floor_ms"] == 1500


def test_a_floor_body_that_is_no_object_or_lacks_the_field_is_a_422(api):
    for body in ([], "1500", {}):
        code, answer = api.call("PUT", "/api/workspace/reviews", body)
        assert code == 422, answer
    code, _ = api.call("PUT", "/api/workspace/reviews", data="{", content_type="application/json")
    assert 400 <= code < 500


def test_operators_read_the_floor_but_neither_set_it_nor_read_the_reviewers(api, known, services):
    wf_id, _ = known
    ann = _as(services, ANN)
    code, body = api.call("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 2000}, headers=ann)
    assert code == 403 and body["error"]["code"] == "forbidden"
    code, body = api.call("GET", f"/api/metrics/workflows/{wf_id}/reviewers", headers=ann)
    assert code == 403 and body["error"]["code"] == "forbidden"


def test_another_workspace_sees_neither_the_reviewers_nor_the_floor(api, known, services):
    wf_id, _ = known
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 2500})
    other = {"Authorization": f"Bearer {make_user(services, 'admin@other.test', 'admin', 'other')}"}
    code, body = api.call("GET", f"/api/metrics/workflows/{wf_id}/reviewers", headers=other)
    assert code == 404 and body["error"]["code"] == "not_found"
    code, _ = api.call("GET", f"/api/metrics/workflows/{wf_id}/reviewers?step_id=first", headers=other)
    assert code == 404
    # its own floor is its own: the default, and setting it changes nothing here
    assert api.ok("GET", "/api/workspace/reviews", headers=other)["attentive_floor_ms"] == 1500
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": 9000}, headers=other)
    assert api.ok("GET", "/api/workspace/reviews")["attentive_floor_ms"] == 2500
    # and its own workflow of the same shape has no reviewers from ours
    own = api.ok("POST", "/api/workflows", {"name": "theirs", "steps": TWO_STEPS}, status=201, headers=other)["id"]
    theirs = api.ok("GET", f"/api/metrics/workflows/{own}/reviewers", headers=other)
    assert (theirs["items"], theirs["floor_ms"]) == ([], 9000)
    api.ok("PUT", "/api/workspace/reviews", {"attentive_floor_ms": None})
