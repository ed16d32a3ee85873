"""The notifier sends an event for an execution and its workspace once, to both rooms together, and the
workspace's summaries after the execution's own events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session

from core.execution import states as S
from services.executions import service as executions
from services.notifier import Events, Notifier
from services.workflows import service as workflows


class Recorder:
    def __init__(self):
        self.sent = []

    def emit(self, event, payload, to=None):
        self.sent.append((event, payload, to))


def test_an_event_for_an_execution_and_its_workspace_is_one_emit_to_both_rooms():
    socketio = Recorder()
    events = Events()
    events.add("execution_update", {"execution_id": "e1", "status": "running"}, execution="e1", workspace="w1")
    events.add("metrics_update", {"workflow_id": "f1"}, workspace="w1")
    Notifier(socketio).send(events)
    assert socketio.sent == [
        ("execution_update", {"execution_id": "e1", "status": "running"}, ["execution:e1", "workspace:w1"]),
        ("metrics_update", {"workflow_id": "f1"}, "workspace:w1"),
    ]


def test_latest_keeps_only_the_last_value_of_a_state():
    events = Events()
    events.latest("coaching_stats", {"accepted": 1}, execution="e1")
    events.add("coaching_suggestion", {"suggestion_id": "s"}, execution="e1", workspace="w1")
    events.latest("coaching_stats", {"accepted": 2}, execution="e1")
    assert [(e, p) for e, p, _ in events.items] == [
        ("coaching_suggestion", {"suggestion_id": "s"}),
        ("coaching_stats", {"accepted": 2}),
    ]


def test_the_workspaces_summaries_go_after_the_executions_events_of_the_same_transaction():
    socketio = Recorder()
    events = Events()
    events.add("metrics_update", {"workflow_id": "f1"}, workspace="w1")
    events.add("workflow_level_changed", {"workflow_id": "f1", "level": "coaching"}, workspace="w1")
    events.add("execution_update", {"execution_id": "e1", "status": "running"}, execution="e1", workspace="w1")
    events.add("coaching_suggestion", {"suggestion_id": "s2"}, execution="e1", workspace="w1")
    events.latest("coaching_stats", {"accepted": 1}, execution="e1")
    Notifier(socketio).send(events)
    assert [event for event, _, _ in socketio.sent] == [
        "execution_update",
        "coaching_suggestion",
        "coaching_stats",
        "metrics_update",
        "workflow_level_changed",
    ]


def step(step_id: str, status: str) -> dict:
    return {"step_id": step_id, "status": status}


def test_one_execution_update_per_execution_and_transaction_made_from_its_last_state_after_the_suggestion():
    events, tx = Events(), Session()  # a session without a database: its commit is never reached here
    e1 = {"execution_id": "e1", "status": "running", "step_id": "a", "steps": [step("a", "running")]}
    # a decision: its step changed; another execution changed too; then the runner opens e1's next suggestion
    events.at_commit(tx, "execution_update", "e1", lambda: dict(e1), execution="e1", workspace="w1")
    events.at_commit(
        tx, "execution_update", "e2", lambda: {"execution_id": "e2", "step_id": "x"}, execution="e2", workspace="w1"
    )
    events.add("coaching_suggestion", {"suggestion_id": "s2", "step_id": "b"}, execution="e1", workspace="w1")
    events.at_commit(tx, "execution_update", "e1", lambda: dict(e1), execution="e1", workspace="w1")
    e1.update(status="waiting_decision", step_id="b", steps=[step("a", "succeeded"), step("b", "waiting")])
    events.made()
    sent = [(event, payload.get("execution_id"), payload.get("step_id")) for event, payload, _ in events.items]
    # the suggestion first, then e1's state as it was when made; e2's update is another execution's, untouched
    assert sent == [
        ("execution_update", "e2", "x"),
        ("coaching_suggestion", None, "b"),
        ("execution_update", "e1", "b"),
    ]
    assert events.items[-1][1]["steps"] == [step("a", "succeeded"), step("b", "waiting")]
    assert events.items[-1][2] == ("execution:e1", "workspace:w1")


def test_execution_updates_added_as_they_are_are_sent_as_they_are():
    events = Events()
    events.add(
        "execution_update",
        {"execution_id": "e1", "status": "running", "steps": [step("a", "running")]},
        execution="e1",
        plain=True,
    )
    events.add("execution_update", {"execution_id": "e1", "status": "paused"}, execution="e1", plain=True)
    assert [payload for _, payload, _ in events.items] == [
        {"execution_id": "e1", "status": "running", "steps": [step("a", "running")]},
        {"execution_id": "e1", "status": "paused"},
    ]


# -- an execution's update made at commit (executions.changed) ------------------------------------------------------

TWO_STEPS = {
    "name": "pushed",
    "steps": [
        {"id": "a", "tool": "echo", "params": {"message": "a"}},
        {"id": "b", "tool": "echo", "params": {"message": "b"}},
    ],
}


@pytest.fixture
def started(services):
    workspace = services.default_workspace_id()
    with services.db.transaction() as tx:
        wf = workflows.create(tx, services.tools, workspace, TWO_STEPS)
        ex = executions.start(tx, services.definitions, workspace, wf.id, {}, "normal")
    return services, ex.id


def test_an_execution_changed_twice_in_a_transaction_gets_one_update_made_at_commit_from_its_final_state(started):
    services, execution_id = started
    socketio = Recorder()
    events = Events()
    with services.db.transaction() as tx:
        ex = executions.get_any(tx, execution_id)
        executions.set_step(ex, "a", status=S.STEP_RUNNING)
        executions.changed(tx, events, ex, "a")
        events.add("coaching_suggestion", {"suggestion_id": "s"}, execution=execution_id, workspace=ex.workspace_id)
        executions.set_step(ex, "a", status=S.STEP_SUCCEEDED, output={"message": "a"})
        executions.set_step(ex, "b", status=S.STEP_RUNNING)
        executions.changed(tx, events, ex, "b")
        assert all(type(payload) is not dict for event, payload, _ in events.items if event == "execution_update")
    # made by the commit (before it: the state it describes is the one committed), and sent in the last one's place
    (update,) = [payload for event, payload, _ in events.items if event == "execution_update"]
    assert [event for event, _, _ in events.items] == ["coaching_suggestion", "execution_update"]
    assert update["step_id"] == "b"
    assert {s["step_id"]: s["status"] for s in update["steps"]} == {"a": S.STEP_SUCCEEDED, "b": S.STEP_RUNNING}
    assert update["progress"] == {"done": 1, "total": 2, "percent": 50.0}
    Notifier(socketio).send(events)
    assert [event for event, _, _ in socketio.sent] == ["coaching_suggestion", "execution_update"]
    # the steps it carried count as pushed: the next change's update carries only what changed after it
    events = Events()
    with services.db.transaction() as tx:
        ex = executions.get_any(tx, execution_id)
        executions.set_step(ex, "b", status=S.STEP_SUCCEEDED)
        executions.changed(tx, events, ex, "b")
    (update,) = [payload for event, payload, _ in events.items if event == "execution_update"]
    assert [s["step_id"] for s in update["steps"]] == ["b"]


def test_a_transaction_rolled_back_makes_no_update(started):
    services, execution_id = started
    events = Events()
    with pytest.raises(RuntimeError):
        with services.db.transaction() as tx:
            ex = executions.get_any(tx, execution_id)
            executions.set_step(ex, "a", status=S.STEP_RUNNING)
            executions.changed(tx, events, ex, "a")
            raise RuntimeError("rolled back")
    (item,) = events.items
    assert type(item[1]) is not dict  # never made: the commit did not happen (and nothing sends these events)


def test_pushed_step_states_are_plain_json_values_in_utc_and_left_out_beyond_64_kib(started):
    services, execution_id = started
    with services.db.transaction() as tx:
        ex = executions.get_any(tx, execution_id)
        executions.set_step(
            ex,
            "a",
            status=S.STEP_SUCCEEDED,
            output={"n": 2**70, "text": "é", 3: [1.5, None]},
            started_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
            finished_at=datetime(2026, 1, 2, 3, 4, 6, 789),
        )
        update = executions.update_event(ex, "a")
        step_a = next(s for s in update["steps"] if s["step_id"] == "a")
        # an integer beyond 64 bits (orjson declines it) is carried as it is; keys become strings; datetimes ISO UTC
        assert step_a["output"] == {"n": 2**70, "text": "é", "3": [1.5, None]}
        assert (step_a["started_at"], step_a["finished_at"]) == (
            "2026-01-02T03:04:05+00:00",
            "2026-01-02T03:04:06.000789+00:00",
        )
        # a copy: changing the step afterwards does not change what is sent
        ex.steps["a"].output["text"] = "changed"
        assert step_a["output"]["text"] == "é"
        executions.set_step(ex, "b", status=S.STEP_SUCCEEDED, output={"text": "é" * 40_000})  # 80,000 bytes of UTF-8
        assert "steps" not in executions.update_event(ex, "b")
