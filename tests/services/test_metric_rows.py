"""Metric rows never lose a count: not when another process writes the same rows, not after a rollback."""

from __future__ import annotations

import pytest

from config import Settings
from services.container import Services
from services.decisions import coaching as decisions
from services.executions import service as executions
from services.metrics import service as metrics
from services.workflows import service as workflows

WORKFLOW = {
    "name": "two",
    "steps": [{"id": f"s{i}", "tool": "echo", "params": {"message": f"step {i}"}} for i in range(4)],
}


class Latest:
    """The newest suggestion per execution, as a panel would keep it."""

    def __init__(self):
        self.latest = {}

    def send(self, batch):
        for event, payload, _room in batch.items:
            if event == "coaching_suggestion":
                self.latest[payload["execution_id"]] = payload["suggestion_id"]


def services_on(url: str, tmp_path, notifier) -> Services:
    settings = Settings(
        env="test",
        database_url=url,
        instance_dir=str(tmp_path),
        demo=False,
        log_level="WARNING",
        secret_key="test-secret",
        random_seed=7,
        async_mode="threading",
    )
    services = Services.build(settings, spawn=lambda fn, *args: fn(*args))
    services.notifier = services.runner.notifier = notifier
    return services


def _start(services: Services, workflow_id: str) -> str:
    workspace = services.default_workspace_id()
    with services.db.transaction() as session:
        execution_id = executions.start(session, services.definitions, workspace, workflow_id, {}, "coaching").id
    services.runner.schedule(execution_id)
    return execution_id


def _one_decided(services: Services, notifier: Latest) -> tuple[str, str]:
    """A new workflow with one coaching execution whose first step is accepted: (workflow id, execution id)."""
    with services.db.transaction() as session:
        workflow_id = workflows.create(session, services.tools, services.default_workspace_id(), WORKFLOW).id
    execution_id = _start(services, workflow_id)
    _decide(services, notifier, execution_id)
    return workflow_id, execution_id


def _decide(services: Services, notifier: Latest, execution_id: str, kind: str = "accept") -> dict:
    return decisions.submit(
        services,
        services.default_workspace_id(),
        execution_id,
        {"suggestion_id": notifier.latest[execution_id], "decision": kind},
        "ada@coach.local",
    )


def _workflow_counts(services: Services, workflow_id: str) -> tuple[int, int, int]:
    with services.db.read() as session:
        workspace = services.default_workspace_id()
        flow = metrics.load(session, workspace, "workflow", workflow_id).counters
    return flow.decisions, flow.accepted, flow.suggestions


def test_two_processes_writing_the_same_rows_count_every_decision(two_processes):
    a, b, notifier = two_processes
    with a.db.transaction() as session:
        workflow_id = workflows.create(session, a.tools, a.default_workspace_id(), WORKFLOW).id
    first, second = _start(a, workflow_id), _start(b, workflow_id)
    # alternate: each process reads what the other one wrote last
    for _ in range(3):
        _decide(a, notifier, first)
        _decide(b, notifier, second)
    _decide(a, notifier, first, "reject")
    decided, accepted, suggested = _workflow_counts(a, workflow_id)
    assert (decided, accepted) == (7, 6)
    assert _workflow_counts(b, workflow_id) == (decided, accepted, suggested)
    # 2 first suggestions, 6 accepts that opened the next step, 1 correction suggestion after the rejection
    assert suggested == 9


def test_a_rolled_back_transaction_leaves_no_trace_in_the_metric_rows(two_processes):
    a, _b, notifier = two_processes
    workspace = a.default_workspace_id()
    workflow_id, execution_id = _one_decided(a, notifier)
    with pytest.raises(RuntimeError):
        with a.db.transaction() as session:  # counted, then rolled back
            metrics.record_decision(session, workspace, metrics.workflow_scopes(workflow_id, 1, "s1"), "reject", 5.0)
            raise RuntimeError("the decision failed after counting")
    _decide(a, notifier, execution_id)
    assert _workflow_counts(a, workflow_id)[:2] == (2, 2)


def test_a_session_closed_without_commit_leaves_no_trace_in_the_metric_rows(two_processes):
    a, _b, notifier = two_processes
    workspace = a.default_workspace_id()
    workflow_id, execution_id = _one_decided(a, notifier)
    session = a.db.Session()  # neither committed nor rolled back: closed, so the database drops it
    metrics.record_decision(session, workspace, metrics.workflow_scopes(workflow_id, 1, "s1"), "reject", 5.0)
    session.close()
    _decide(a, notifier, execution_id)
    assert _workflow_counts(a, workflow_id)[:2] == (2, 2)
