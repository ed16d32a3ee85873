"""The workspace's and the operators' totals (GET /api/metrics/global, /api/metrics/operators, GET /metrics) are
counted from the decisions when read (services/metrics/totals.py), on SQLite and PostgreSQL: the figures are those
counting every decision into a running state gave (core.coaching.metrics.MetricsState), a plan's decisions count, a
decision held for its undo window counts once released, and another workspace's decisions never appear."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from core.coaching.counters import wilson_lower_bound
from core.coaching.latency import LatencyHistogram
from services.models.coaching import Decision
from services.orm import utcnow
from tests.conftest import Api, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

ONE = [{"id": "only", "tool": "echo", "params": {"v": "one"}, "on_reject": "stop"}]
WIPE = [
    {"id": "wipe", "tool": "shell.run", "params": {"command": ["echo", "wiped"]}},  # destructive: held
    {"id": "note", "tool": "echo", "params": {"msg": "done"}},
]
PLAN = {
    "name": "greet",
    "mode": "coaching",
    "steps": [
        {"id": "step_1", "tool": "echo", "params": {"message": "hello"}},
        {"id": "step_2", "tool": "echo", "params": {"message": "again"}},
    ],
}
ANN, BOB, ADMIN = "ann@test.local", "bob@test.local", "admin@test.local"
ATTR = {"accept": "accepted", "reject": "rejected", "correct": "corrected", "manual": "manual", "skip": "skipped"}
WINDOW_S = 10


class Ledger:
    """The decisions made, as the test saw them: (operator, kind, latency_ms) in order (the latency as its row keeps
    it: an answer rounds it to 0.1 ms)."""

    def __init__(self):
        self.made: list[tuple[str, str, float]] = []

    def add(self, api: Api, operator: str, answer: dict) -> None:
        with api.services.db.read() as session:
            row = session.get(Decision, answer["decision"]["suggestion_id"])
            assert row is not None and round(row.latency_ms, 1) == answer["decision"]["latency_ms"]
            self.made.append((operator, answer["decision"]["decision"], row.latency_ms))

    def expected(self, operator: str | None = None, suggestions: int = 0) -> dict:
        """What counting each of them gave: counts, rates over all of them (the window of 50 holds them all here),
        the Wilson bound of the rolling acceptance and the latency histogram's p50 and p90."""
        mine = [(kind, ms) for who, kind, ms in self.made if operator in (None, who)]
        kinds = Counter(kind for kind, _ in mine)
        counted = len(mine) - kinds["skip"]
        histogram = LatencyHistogram()
        for _, ms in mine:
            histogram.add(ms)
        rate = round(kinds["accept"] / counted, 4) if counted else 0.0
        return {
            "decisions": len(mine),
            "suggestions": suggestions,
            **{ATTR[k]: kinds[k] for k in ATTR},
            "acceptance_rate": rate,
            "rolling_acceptance_rate": rate,
            "confidence": round(wilson_lower_bound(kinds["accept"], counted), 4),
            "decision_latency_ms": histogram.percentiles(),
            "window_size": 50,
            "window_decisions": len(mine),
        }


def samples(text: str) -> dict[str, float]:
    """A Prometheus text page's samples, by name and labels."""
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def _as(api: Api, email: str) -> dict:
    return {"Authorization": f"Bearer {make_user(api.services, email, 'operator')}"}


def _decide(api: Api, ex_id: str, kind: str, headers: dict | None = None) -> dict:
    api.settle(ex_id)
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    body = {"suggestion_id": sug["suggestion_id"], "decision": kind}
    if kind == "correct":
        body["correction"] = {"v": "fixed"}
    answer = api.ok("POST", f"/api/executions/{ex_id}/coaching/decision", body, headers=headers or {})
    api.settle(ex_id)
    return answer


def _one_each(api: Api, ledger: Ledger, wf_id: str, decided: list[tuple[str, str]]) -> None:
    """Each (operator, kind): a new execution of the one-step workflow, its suggestion decided so."""
    for who, kind in decided:
        ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
        ledger.add(api, who, _decide(api, ex_id, kind, _as(api, who) if who != ADMIN else None))


def _plan(api: Api, ledger: Ledger) -> None:
    """A plan run in coaching, its two suggestions accepted by the admin."""
    plan_id = api.ok("POST", "/api/plans", PLAN, status=201)["plan_id"]
    api.ok("POST", f"/api/plans/{plan_id}/approve")
    api.ok("POST", f"/api/plans/{plan_id}/execute", {})
    for _ in range(2):
        ledger.add(api, ADMIN, _decide(api, plan_id, "accept"))
    assert api.settle(plan_id)["status"] == "completed"


def _global(api: Api) -> dict:
    body = api.ok("GET", "/api/metrics/global")
    return {k: v for k, v in body.items() if k not in ("series", "workflows", "levels", "auto_ready_workflows")}


def _operators(api: Api) -> dict[str, dict]:
    return {
        o["operator"]: {k: v for k, v in o.items() if k not in ("operator", "series")}
        for o in api.ok("GET", "/api/metrics/operators")["items"]
    }


def test_the_totals_are_what_counting_each_decision_gave(api):
    ledger = Ledger()
    wf_id = api.workflow(ONE)["id"]
    _one_each(
        api,
        ledger,
        wf_id,
        [(ANN, "accept"), (BOB, "reject"), (ANN, "correct"), (BOB, "manual"), (ANN, "skip"), (ANN, "accept")],
    )
    _one_each(api, ledger, wf_id, [(BOB, "accept")])
    _plan(api, ledger)
    # a suggestion made and not decided yet counts as a suggestion only
    waiting = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
    assert api.settle(waiting)["status"] == "waiting_decision"

    # 7 one-step executions decided and 1 waiting, and the plan's 2 suggestions
    assert _global(api) == ledger.expected(suggestions=10)
    assert ledger.expected()["decisions"] == 9 and ledger.expected()["acceptance_rate"] == 0.625
    assert _operators(api) == {who: ledger.expected(who) for who in (ADMIN, ANN, BOB)}
    assert (ledger.expected(ANN)["acceptance_rate"], ledger.expected(BOB)["acceptance_rate"]) == (0.6667, 0.3333)
    assert list(_operators(api)) == [ADMIN, ANN, BOB]  # by email


def test_a_held_decision_counts_once_released_and_one_taken_back_never(api, services):
    api.ok("PUT", "/api/workspace/undo", {"window_s": WINDOW_S})
    try:
        ledger = Ledger()
        _one_each(api, ledger, api.workflow(ONE)["id"], [(ANN, "accept")])
        wipe = api.workflow(WIPE)["id"]
        ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wipe}, status=201)["execution_id"]
        held = _decide(api, ex_id, "reject", _as(api, BOB))
        assert held["decision"]["held_until"]
        # held: a suggestion made, no decision counted (the first execution's and this one's suggestions)
        assert _global(api) == ledger.expected(suggestions=2)
        assert set(_operators(api)) == {ANN}

        sug = held["decision"]["suggestion_id"]
        api.ok("POST", f"/api/executions/{ex_id}/coaching/undo", {"suggestion_id": sug})
        assert _global(api) == ledger.expected(suggestions=2)  # taken back: never counted
        ledger.add(api, BOB, _decide(api, ex_id, "accept", _as(api, BOB)))
        assert services.runner.scans.fire_due(utcnow() + timedelta(seconds=WINDOW_S + 1)) == 1
        api.settle(ex_id)
        # released: counted, and its step ran, so the next step's suggestion was made
        assert _global(api) == ledger.expected(suggestions=3)
        assert _operators(api) == {ANN: ledger.expected(ANN), BOB: ledger.expected(BOB)}
    finally:
        api.ok("PUT", "/api/workspace/undo", {"window_s": None})


def test_another_workspaces_decisions_never_appear_but_metrics_counts_every_workspace(api, app):
    ledger, theirs = Ledger(), Ledger()
    _one_each(api, ledger, api.workflow(ONE)["id"], [(ANN, "accept"), (BOB, "correct"), (ANN, "skip")])
    other = app.test_client()
    other.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(api.services, 'lead@other.test', 'admin', 'other')}"
    other.environ_base["HTTP_X_COACH_WORKSPACE"] = "other"
    elsewhere = Api(other, api.services)
    wf_id = elsewhere.workflow(ONE)["id"]
    for kind in ("reject", "accept", "manual", "accept"):
        ex_id = elsewhere.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id}, status=201)["execution_id"]
        theirs.add(elsewhere, "lead@other.test", _decide(elsewhere, ex_id, kind))

    assert _global(api) == ledger.expected(suggestions=3)
    assert _operators(api) == {ANN: ledger.expected(ANN), BOB: ledger.expected(BOB)}
    assert _global(elsewhere) == theirs.expected(suggestions=4)
    assert _operators(elsewhere) == {"lead@other.test": theirs.expected("lead@other.test")}

    # GET /metrics: every workspace's together, naming none
    found = samples(api.client.get("/metrics").get_data(as_text=True))
    both = Ledger()
    both.made = ledger.made + theirs.made
    everything = both.expected(suggestions=7)
    assert found["coach_suggestions_total"] == 7
    assert {k: found[f'coach_decisions_total{{decision="{k}"}}'] for k in ATTR} == {
        k: everything[v] for k, v in ATTR.items()
    }
    assert found['coach_decision_latency_ms{quantile="0.5"}'] == everything["decision_latency_ms"]["p50"]
    assert found['coach_decision_latency_ms{quantile="0.9"}'] == everything["decision_latency_ms"]["p90"]
    assert not any("other" in name or "default" in name for name in found)


def test_no_decision_yet_is_zeros_and_no_latency(api):
    body = _global(api)
    assert body == Ledger().expected()
    assert api.ok("GET", "/api/metrics/operators") == {"items": []}
    found = samples(api.client.get("/metrics").get_data(as_text=True))
    assert found["coach_suggestions_total"] == 0 and not any("latency" in name for name in found)
