"""The charts' hourly series, counted from the decisions when read: per UTC hour, per workflow, per operator, two
weeks back, one workspace's only (on SQLite and PostgreSQL, whose hour expressions differ)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from services import workspaces
from services.decisions import coaching as decisions
from services.executions import service as executions
from services.metrics import series
from services.models.coaching import Decision, Suggestion
from services.orm import utcnow
from services.workflows import service as workflows

WORKFLOW = {
    "name": "four",
    "steps": [{"id": f"s{i}", "tool": "echo", "params": {"message": f"step {i}"}} for i in range(4)],
}


def _pending(services, execution_id: str) -> str:
    services.runner.wait_idle(5)
    with services.db.read() as session:
        return session.scalar(
            select(Suggestion.id).where(Suggestion.execution_id == execution_id, Suggestion.status == "pending")
        )


def _decide(services, workspace: str, execution_id: str, kind: str, operator: str) -> str:
    suggestion_id = _pending(services, execution_id)
    body = {"suggestion_id": suggestion_id, "decision": kind}
    if kind == "reject":
        body["feedback"] = "not this"
    decisions.submit(services, workspace, execution_id, body, operator)
    return suggestion_id


def _made_at(services, suggestion_id: str, when) -> None:
    """History: the decision as if made at `when`."""
    with services.db.transaction() as session:
        session.execute(update(Decision).where(Decision.suggestion_id == suggestion_id).values(created_at=when))


@pytest.fixture
def history(services):
    """Four decisions in the default workspace: two three hours ago (ann accepts, bob skips), one an hour ago (ann
    accepts, in another workflow), one fifteen days ago (past what the charts show)."""
    workspace = services.default_workspace_id()
    with services.db.transaction() as session:
        first = workflows.create(session, services.tools, workspace, WORKFLOW).id
        other = workflows.create(session, services.tools, workspace, {**WORKFLOW, "name": "other"}).id
        runs = [
            executions.start(session, services.definitions, workspace, wf, {}, "coaching").id for wf in (first, other)
        ]
    for execution_id in runs:
        services.runner.schedule(execution_id)
    hour = utcnow().replace(minute=0, second=0, microsecond=0)
    made = [
        (_decide(services, workspace, runs[0], "accept", "ann@coach.local"), hour - timedelta(hours=3, minutes=-5)),
        (_decide(services, workspace, runs[0], "skip", "bob@coach.local"), hour - timedelta(hours=3, minutes=-50)),
        (_decide(services, workspace, runs[1], "accept", "ann@coach.local"), hour - timedelta(minutes=30)),
        (_decide(services, workspace, runs[0], "accept", "ann@coach.local"), hour - timedelta(days=15)),
    ]
    for suggestion_id, when in made:
        _made_at(services, suggestion_id, when)
    return {"workspace": workspace, "first": first, "other": other, "hour": hour}


def test_the_workspace_series_counts_each_utc_hour_of_the_last_two_weeks(services, history):
    with services.db.read() as session:
        points = series.workspace_series(session, history["workspace"])
    three_ago, one_ago = history["hour"] - timedelta(hours=3), history["hour"] - timedelta(hours=1)
    assert [p["bucket"] for p in points] == [three_ago.isoformat(), one_ago.isoformat()]
    assert points[0] | {"latency_ms_avg": None} == {
        "bucket": three_ago.isoformat(),
        "decisions": 2,
        "accepted": 1,
        "rejected": 0,
        "corrected": 0,
        "manual": 0,
        "skipped": 1,
        "acceptance_rate": 1.0,
        "latency_ms_avg": None,
    }  # a skip is not counted in the rate
    assert points[0]["latency_ms_avg"] >= 0
    assert (points[1]["decisions"], points[1]["accepted"], points[1]["acceptance_rate"]) == (1, 1, 1.0)


def test_a_workflow_and_each_operator_have_their_own_series(services, history):
    with services.db.read() as session:
        first = series.workflow_series(session, history["workspace"], history["first"])
        other = series.workflow_series(session, history["workspace"], history["other"])
        people = series.operator_series(session, history["workspace"])
    assert [(p["decisions"], p["accepted"], p["skipped"]) for p in first] == [(2, 1, 1)]
    assert [(p["decisions"], p["accepted"]) for p in other] == [(1, 1)]
    assert sorted(people) == ["ann@coach.local", "bob@coach.local"]
    assert [(p["decisions"], p["accepted"]) for p in people["ann@coach.local"]] == [(1, 1), (1, 1)]
    assert [(p["decisions"], p["skipped"]) for p in people["bob@coach.local"]] == [(1, 1)]


def test_another_workspace_sees_none_of_it(services, history):
    with services.db.transaction() as session:
        elsewhere = workspaces.create(session, "elsewhere").id
    with services.db.read() as session:
        assert series.workspace_series(session, elsewhere) == []
        assert series.operator_series(session, elsewhere) == {}
        assert series.workflow_series(session, elsewhere, history["first"]) == []
