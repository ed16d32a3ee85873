"""Two app instances on one database (SQLite, and PostgreSQL when it answers) scan for due schedules at the same
moment: every due schedule fires exactly once, and a process killed between its claim and its commit loses no fire
(services/triggers/schedules.py)."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from services.models.executions import Execution
from services.models.triggers import TriggerSchedule, TriggerStart
from services.triggers import schedules
from services.workflows import service as workflows

WORKFLOW = {
    "name": "tick",
    "variables": {"n": {"type": "integer", "default": 0}},
    "steps": [{"id": "a", "tool": "echo", "params": {"n": "{{ vars.n }}"}}],
}
SCHEDULES = 12


@pytest.fixture
def two_apps(settings):
    from api.app import create_app

    apps = [
        create_app(settings.with_overrides(instance_id=f"instance-{name}"), migrate=False, recover=False)
        for name in "ab"
    ]
    yield [app.extensions["coach"] for app in apps]
    for app in apps:
        services = app.extensions["coach"]
        services.runner.wait_idle(10)
        services.close()


def _schedules(services, count: int = SCHEDULES) -> tuple[str, list[str]]:
    workspace = services.default_workspace_id()
    with services.db.transaction() as session:
        workflow_id = workflows.create(session, services.tools, workspace, WORKFLOW).id
    ids = []
    for i in range(count):
        with services.db.transaction() as session:
            ids.append(
                schedules.create(
                    session,
                    services.definitions,
                    workspace,
                    workflow_id,
                    {"name": f"s{i}", "cron": "* * * * *", "timezone": "UTC", "variables": {"n": i}},
                    "lead@test.local",
                ).id
            )
    return workspace, ids


def _scan_together(a, b, now) -> int:
    barrier, started = threading.Barrier(2), []

    def scan(services):
        barrier.wait()
        started.append(services.runner.scans.fire_due(now))

    threads = [threading.Thread(target=scan, args=(s,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return sum(started)


def test_two_instances_scanning_at_once_fire_each_due_schedule_exactly_once(two_apps):
    a, b = two_apps
    _, ids = _schedules(a)
    with a.db.read() as session:
        first = max(session.scalars(select(TriggerSchedule.next_fire_at)))
    for minute in range(3):  # three slots in a row, both instances scanning each time
        assert _scan_together(a, b, first + timedelta(minutes=minute, seconds=1)) == SCHEDULES
    with b.db.read() as session:
        slots = session.execute(select(TriggerStart.schedule_id, TriggerStart.fire_at)).all()
        executions = session.scalar(select(func.count()).select_from(Execution))
        following = set(session.scalars(select(TriggerSchedule.next_fire_at)))
    assert Counter(schedule_id for schedule_id, _ in slots) == {i: 3 for i in ids}  # once per slot, no more
    assert len(set(slots)) == len(slots) == executions == 3 * SCHEDULES
    assert following == {first + timedelta(minutes=3)}


def test_a_process_killed_between_claim_and_commit_loses_no_fire(two_apps):
    a, b = two_apps
    workspace, [schedule_id] = _schedules(a, 1)
    with a.db.read() as session:
        slot = session.get(TriggerSchedule, schedule_id).next_fire_at
    now = slot + timedelta(seconds=1)
    with pytest.raises(RuntimeError):  # instance a claims the fire and starts it, then dies before its commit
        with a.db.transaction() as session:
            claimed, execution_id = schedules.fire(
                session, a.definitions, a.settings, schedule_id, workspace, slot, now
            )
            assert claimed and execution_id
            raise RuntimeError("killed")
    with b.db.read() as session:
        assert session.get(TriggerSchedule, schedule_id).next_fire_at == slot  # still due
        assert session.scalar(select(func.count()).select_from(Execution)) == 0
    assert b.runner.scans.fire_due(now) == 1  # the next scan, on the other instance, fires it
    assert a.runner.scans.fire_due(now) == 0
    with a.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Execution)) == 1
        assert session.scalar(select(TriggerStart.fire_at)) == slot
