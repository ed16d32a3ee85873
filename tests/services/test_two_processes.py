"""Two server processes on one database: each decision sees what was written before it, by the other process, by
another kind of transaction in the same process, or from outside Coach; a transaction that failed half way leaves
nothing behind."""

from __future__ import annotations

import sqlite3

import pytest

from core.errors import Conflict
from services.audit import service as audit
from services.coaching import service as coaching
from services.decisions import coaching as decisions
from services.executions import service as executions
from services.orchestration import control
from services.workflows import service as workflows
from tests.services.test_metric_rows import WORKFLOW, _start, _workflow_counts

WS: dict[int, str] = {}


def _decide(services, notifier, execution_id: str) -> dict:
    """Accept the execution's pending suggestion, as an operator's request would: nothing else runs in between
    (the workspace id looked up once, before)."""
    return decisions.submit(
        services,
        WS[id(services)],
        execution_id,
        {"suggestion_id": notifier.latest[execution_id], "decision": "accept"},
        "ada@coach.local",
    )


def _workflow(services, *others) -> str:
    """A new workflow (and each process's workspace id, looked up now)."""
    for one in (services, *others):
        WS[id(one)] = one.default_workspace_id()
    with services.db.transaction() as session:
        return workflows.create(session, services.tools, WS[id(services)], WORKFLOW).id


def _execution(services, execution_id: str) -> dict:
    with services.db.read() as session:
        ex = executions.get(session, WS[id(services)], execution_id)
        return {"status": ex.status, "steps": {k: (v.status, v.decision) for k, v in ex.steps.items()}}


def _after_two(services, notifier, workflow_id: str) -> str:
    """A new execution of the workflow with two steps accepted, awaiting the third decision."""
    execution_id = _start(services, workflow_id)
    _decide(services, notifier, execution_id)
    _decide(services, notifier, execution_id)
    return execution_id


def _chain_ok(services) -> None:
    with services.db.read() as session:
        report = audit.verify(session, WS[id(services)])
    assert report["ok"], report


def test_a_pause_by_another_process_stops_the_next_decision(two_processes):
    a, b, notifier = two_processes
    execution_id = _after_two(a, notifier, _workflow(a, b))  # awaiting step 3
    with b.command() as uow:
        coaching.pause(uow, WS[id(b)], execution_id, "lead@coach.local")
    with pytest.raises(Conflict, match="paused"):
        _decide(a, notifier, execution_id)
    assert _execution(b, execution_id)["status"] == "paused"
    with b.command() as uow:
        coaching.resume(uow, WS[id(b)], execution_id, "lead@coach.local", tools=b.tools, definitions=b.definitions)
    _decide(a, notifier, execution_id)
    steps = _execution(b, execution_id)["steps"]
    assert [steps[f"s{i}"] for i in range(4)] == [("succeeded", "accept")] * 3 + [("waiting", None)]
    _chain_ok(a)  # a's audit events went on from b's


def test_a_pause_in_the_same_process_stops_the_next_decision(two_processes):
    a, _b, notifier = two_processes
    execution_id = _after_two(a, notifier, _workflow(a))
    with a.command() as uow:
        coaching.pause(uow, WS[id(a)], execution_id, "lead@coach.local")
    with pytest.raises(Conflict, match="paused"):
        _decide(a, notifier, execution_id)
    assert _execution(a, execution_id)["status"] == "paused"


def test_a_cancel_in_the_same_process_supersedes_the_pending_suggestion(two_processes):
    a, _b, notifier = two_processes
    workflow_id = _workflow(a)
    execution_id = _after_two(a, notifier, workflow_id)
    with a.command() as uow:
        control.cancel(uow, WS[id(a)], execution_id, "lead@coach.local")
    with pytest.raises(Conflict, match="superseded"):
        _decide(a, notifier, execution_id)
    assert _execution(a, execution_id)["status"] == "cancelled"
    assert _workflow_counts(a, workflow_id)[:2] == (2, 2)


def test_a_decision_that_fails_half_way_leaves_no_trace(two_processes, monkeypatch):
    a, _b, notifier = two_processes
    workflow_id = _workflow(a)
    execution_id = _after_two(a, notifier, workflow_id)
    before = _execution(a, execution_id)

    def fail(*args, **kwargs):
        raise RuntimeError("going on to the next step failed")

    with monkeypatch.context() as patch:  # fails after the step, the suggestion and the metrics were changed
        patch.setattr(a.runner, "drive", fail)
        with pytest.raises(RuntimeError):
            _decide(a, notifier, execution_id)
    assert _execution(a, execution_id) == before
    _decide(a, notifier, execution_id)  # the same suggestion, still pending, decided once
    steps = _execution(a, execution_id)["steps"]
    assert (steps["s2"], steps["s3"]) == (("succeeded", "accept"), ("waiting", None))
    assert _workflow_counts(a, workflow_id)[:2] == (3, 3)
    _chain_ok(a)


def test_decisions_alternating_between_processes_each_see_the_others_work(two_processes):
    a, b, notifier = two_processes
    workflow_id = _workflow(a, b)
    execution_id = _start(a, workflow_id)
    for i in range(4):  # one execution, decided by whichever process the operator's request reached
        _decide(a if i in (0, 1, 3) else b, notifier, execution_id)
    steps = _execution(a, execution_id)["steps"]
    assert [steps[f"s{i}"][0] for i in range(4)] == ["succeeded"] * 4
    assert _execution(a, execution_id)["status"] == "completed"
    assert _workflow_counts(b, workflow_id)[:2] == (4, 4)
    _chain_ok(b)


def test_a_write_from_outside_coach_is_seen_by_the_next_decision(two_processes):
    """A write by a tool that knows nothing of Coach (the sqlite3 module, as the sqlite3 shell would write)."""
    a, b, notifier = two_processes
    execution_id = _after_two(a, notifier, _workflow(a, b))
    path = a.db.engine.url.database
    shell = sqlite3.connect(path, isolation_level=None)
    try:
        shell.execute("UPDATE executions SET status = 'paused' WHERE id = ?", (execution_id,))
    finally:
        shell.close()
    with pytest.raises(Conflict, match="paused"):
        _decide(a, notifier, execution_id)
    assert _execution(a, execution_id)["steps"]["s2"] == ("waiting", None)


def test_a_rule_written_by_another_process_judges_the_next_decision(two_processes):
    """The next accept is judged by the rule another process wrote, not by what this process compiled before."""
    from services.policies import service as policies

    a, b, notifier = two_processes
    execution_id = _after_two(a, notifier, _workflow(a, b))
    with b.db.transaction() as session:
        policies.create(
            session,
            WS[id(b)],
            {"name": "no echo", "effect": "deny", "reason": "frozen", "match": {"tool": "echo"}},
            "lead@coach.local",
        )
    with pytest.raises(Conflict, match="no echo"):
        _decide(a, notifier, execution_id)
    assert _execution(a, execution_id)["steps"]["s2"] == ("waiting", None)


def test_the_policy_revision_written_from_outside_coach_is_read_again(two_processes):
    a, b, notifier = two_processes
    execution_id = _after_two(a, notifier, _workflow(a, b))
    from services.policies import service as policies

    with a.db.transaction() as session:
        policies.revision(session, WS[id(a)])
    shell = sqlite3.connect(a.db.engine.url.database, isolation_level=None)
    try:
        shell.execute(
            "INSERT INTO policy_settings (workspace_id, revision, defaults, updated_by, updated_at) "
            "VALUES (?, 41, '{}', 'shell', '2026-01-01 00:00:00') "
            "ON CONFLICT (workspace_id) DO UPDATE SET revision = 41",
            (WS[id(a)],),
        )
    finally:
        shell.close()
    with a.db.transaction() as session:
        assert policies.revision(session, WS[id(a)]) == 41
    _decide(a, notifier, execution_id)  # and decisions go on


def _start_in(services, workflow_id: str) -> str:
    """Start a coaching execution and run it to its first suggestion, as POST /api/executions does, in the
    workspace looked up before (no other transaction in between)."""
    with services.db.transaction() as session:
        execution_id = executions.start(session, services.definitions, WS[id(services)], workflow_id, {}, "coaching").id
    services.runner.schedule(execution_id)
    return execution_id


def test_starting_an_execution_between_decisions_of_another_leaves_both_going_on(two_processes):
    """A start between two decisions of another execution: both executions go on."""
    a, b, notifier = two_processes
    workflow_id = _workflow(a, b)
    first = _after_two(a, notifier, workflow_id)
    second = _start_in(a, workflow_id)
    _decide(a, notifier, second)
    _decide(a, notifier, first)
    assert _execution(b, first)["steps"]["s2"] == ("succeeded", "accept")
    assert _execution(b, second)["steps"]["s0"] == ("succeeded", "accept")
    assert [_execution(b, i)["steps"][s][0] for i, s in ((first, "s3"), (second, "s1"))] == ["waiting"] * 2
    assert _workflow_counts(b, workflow_id)[:2] == (4, 4)
    _chain_ok(b)


def test_a_write_by_another_process_after_a_start_is_still_seen(two_processes):
    a, b, notifier = two_processes
    workflow_id = _workflow(a, b)
    execution_id = _start_in(a, workflow_id)
    with b.command() as uow:
        coaching.pause(uow, WS[id(b)], execution_id, "lead@coach.local")
    with pytest.raises(Conflict, match="paused"):
        _decide(a, notifier, execution_id)


def test_the_runner_going_over_an_execution_awaiting_a_decision_changes_nothing_for_it(two_processes):
    """The runner goes over an execution awaiting a decision: the decision after it goes on from what it wrote."""
    a, b, notifier = two_processes
    workflow_id = _workflow(a, b)
    execution_id = _after_two(a, notifier, workflow_id)
    a.runner.schedule(execution_id)  # finds it waiting for a decision: nothing to run
    _decide(a, notifier, execution_id)
    assert _execution(b, execution_id)["steps"]["s2"] == ("succeeded", "accept")
    assert _workflow_counts(b, workflow_id)[:2] == (3, 3)
