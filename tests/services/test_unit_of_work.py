"""services/unit_of_work.py: a unit of work is found through its session, does what its modules left for its end
before the commit (no before_commit listener does it), and one opened with only the database refuses events and
runs instead of dropping them."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from services.executions import service as executions
from services.metrics import service as metrics
from services.models.executions import Execution
from services.models.metrics import MetricLatency, MetricScope
from services.notifier import Events
from services.unit_of_work import UnitOfWork, unit_of_work
from services.workflows import service as workflows

WORKFLOW = {"name": "uow", "steps": [{"id": "s1", "tool": "echo", "params": {"message": "hi"}}]}


def test_no_session_of_the_app_has_a_before_commit_listener(services):
    with services.command() as uow:
        assert list(uow.session.dispatch.before_commit) == []
    with services.db.read() as session:
        assert list(session.dispatch.before_commit) == []


def test_a_unit_of_work_is_found_through_its_session_and_a_read_has_none(services):
    with services.command() as uow:
        assert UnitOfWork.of(uow.session) is uow
        session = uow.session
    assert UnitOfWork.of(session) is None  # (it ended)
    with services.db.read() as reader:
        assert UnitOfWork.of(reader) is None
    assert UnitOfWork.of(None) is None


def test_a_unit_of_work_with_only_the_database_refuses_events_and_runs(services):
    with pytest.raises(RuntimeError, match="sends no events"):
        with unit_of_work(services.db) as uow:
            uow.events.add("approval_decided", {"approval_id": "a"}, workspace="w")
    with pytest.raises(RuntimeError, match="sends no events"):
        with unit_of_work(services.db) as uow:
            uow.events.at_commit("execution_update", "e", dict, execution="e")
    with pytest.raises(RuntimeError, match="schedules no runs"):
        with unit_of_work(services.db) as uow:
            uow.run_next("e")


def test_a_metric_counted_in_a_unit_of_work_is_written_at_its_end_and_not_before(services):
    workspace = services.default_workspace_id()
    with services.command() as uow:
        wf = workflows.create(uow.session, services.tools, workspace, WORKFLOW)
    scopes = [("workflow", wf.id)]
    with services.command() as uow:
        metrics.record_suggestion(uow.session, workspace, scopes)
        metrics.record_decision(uow.session, workspace, scopes, "accept", 1200.0)
        (row,) = [obj for obj in uow.session.identity_map.values() if isinstance(obj, MetricScope)]
        # counted in memory: the row's columns and its latency bucket get it only at the end of the block
        assert (row.suggestions, row.accepted, row.recent) == (0, 0, "")
        assert uow.session.scalar(select(func.count()).select_from(MetricLatency)) == 0
    with services.db.read() as session:
        stored = session.scalars(select(MetricScope).where(MetricScope.key == wf.id)).one()
        buckets = session.execute(select(MetricLatency.count).where(MetricLatency.scope_id == stored.id)).all()
    assert (stored.suggestions, stored.accepted, stored.recent, stored.latency_min) == (1, 1, "a", 1200.0)
    assert buckets == [(1,)]
    with services.command() as uow:  # the same bucket again: counted up in SQL
        metrics.record_decision(uow.session, workspace, scopes, "reject", 1201.0)
    with services.db.read() as session:
        buckets = session.execute(select(MetricLatency.count).where(MetricLatency.scope_id == stored.id)).all()
        state = metrics.load(session, workspace, "workflow", wf.id)
    assert buckets == [(2,)] and state.window.to_str() == "ar" and state.latency.count == 2
    assert (state.latency.min, state.latency.max) == (1200.0, 1201.0)


def test_a_metric_counted_outside_a_unit_of_work_is_an_error_not_a_lost_count(services):
    workspace = services.default_workspace_id()
    with services.command() as uow:
        wf = workflows.create(uow.session, services.tools, workspace, WORKFLOW)
    with services.db.transaction() as session:  # (the unit of work's own session, opened without it)
        with pytest.raises(RuntimeError, match="outside a unit of work"):
            metrics.record_suggestion(session, workspace, [("workflow", wf.id)])


def test_the_payload_of_a_state_event_is_made_before_the_commit_from_the_state_then(services):
    workspace = services.default_workspace_id()
    with services.command() as uow:
        wf = workflows.create(uow.session, services.tools, workspace, WORKFLOW)
    with services.command() as uow:
        ex = executions.start(uow.session, services.definitions, workspace, wf.id, {}, "normal")
        uow.events.at_commit("probe", ex.id, lambda: {"status": ex.status}, execution=ex.id)
        ex.status = "cancelled"
        events: Events = uow.events
        assert [type(payload) for event, payload, _ in events.items if event == "probe"] != [dict]  # not made yet
    assert [payload for event, payload, _ in events.items if event == "probe"] == [{"status": "cancelled"}]
    with services.db.read() as session:
        assert session.get(Execution, ex.id).status == "cancelled"
