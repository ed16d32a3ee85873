"""The notifier sends an execution's events to its room and tells its workspace's room in one small, coalesced
`queue_changed`; the workspace's summaries go after the execution's own events."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session

from core.execution import states as S
from services.executions import service as executions
from services.notifier import QUEUE_CHANGED_MAX, Events, Notifier
from services.workflows import service as workflows


class Recorder:
    def __init__(self):
        self.sent = []

    def emit(self, event, payload, to=None):
        self.sent.append((event, payload, to))


class Clock(Recorder):
    """A Socket.IO server whose background tasks are threads and whose sleep ends when the test says so: an interval
    ends at end_interval(), never by the wall clock."""

    def __init__(self):
        super().__init__()
        self.tasks: list[threading.Thread] = []
        self._tick, self._asleep = threading.Semaphore(0), threading.Semaphore(0)

    def start_background_task(self, target, *args):
        task = threading.Thread(target=target, args=args, daemon=True)
        self.tasks.append(task)
        task.start()
        return task

    def sleep(self, _seconds):
        self._asleep.release()
        assert self._tick.acquire(timeout=30), "the test never ended the interval"

    def running(self) -> int:
        return sum(task.is_alive() for task in self.tasks)

    def end_interval(self):
        """Ends the interval the timer sleeps in, and waits until it has sent what it held and sleeps again or ended."""
        assert self._asleep.acquire(timeout=30), "no timer sleeps"
        self._tick.release()
        while True:
            if self._asleep.acquire(timeout=0.01):
                self._asleep.release()  # asleep again: the next end_interval takes it
                return
            if not self.running():
                return


def decided(events: Events, execution: str, status: str, workspace: str = "w1") -> Events:
    events.add(
        "coaching_suggestion",
        {"execution_id": execution, "suggestion_id": "s"},
        execution=execution,
        workspace=workspace,
    )
    events.add(
        "execution_update", {"execution_id": execution, "status": status}, execution=execution, workspace=workspace
    )
    return events


def test_an_executions_event_goes_to_its_room_and_its_workspace_hears_one_queue_changed():
    socketio = Recorder()
    events = decided(Events(), "e1", "running")
    events.add("approval_requested", {"approval_id": "a1"}, workspace="w1")
    events.add("metrics_update", {"workflow_id": "f1"}, workspace="w1")
    Notifier(socketio).send(events)
    assert [(event, to) for event, _, to in socketio.sent] == [
        ("coaching_suggestion", "execution:e1"),
        ("execution_update", "execution:e1"),
        ("approval_requested", "workspace:w1"),  # the workspace's own event, as it is
        ("queue_changed", "workspace:w1"),
        ("metrics_update", "workspace:w1"),
    ]
    changed = socketio.sent[3][1]
    assert changed["workspace_id"] == "w1" and changed["truncated"] is False
    assert changed["executions"] == [{"execution_id": "e1", "status": "running"}]
    assert changed["events"] == ["coaching_suggestion", "execution_update"]
    assert datetime.fromisoformat(changed["at"]).tzinfo is not None


def test_quick_changes_make_one_event_at_once_and_one_at_the_intervals_end_with_the_last_change():
    socketio = Clock()
    notifier = Notifier(socketio, coalesce_s=0.25)

    def workspace_events():
        return [(e, p) for e, p, to in socketio.sent if to == "workspace:w1"]

    notifier.send(decided(Events(), "e1", "running"))
    # the leading edge: sent at once, and the interval's timer started
    assert [e for e, _ in workspace_events()] == ["queue_changed"] and socketio.running() == 1
    for n in range(20):  # twenty decisions within the interval, the last one completes e2
        events = decided(Events(), "e2" if n % 2 else "e3", "completed" if n == 19 else "running")
        events.add("metrics_update", {"workflow_id": "f1", "decisions": n}, workspace="w1")
        notifier.send(events)
    assert len(workspace_events()) == 1  # held until the interval ends
    # every execution's own events went to its room at once, in order
    assert len([1 for _, _, to in socketio.sent if to == "execution:e2"]) == 20
    socketio.end_interval()
    [(_, first), (_, second), (_, metrics)] = workspace_events()
    assert second["executions"] == [
        {"execution_id": "e3", "status": "running"},
        {"execution_id": "e2", "status": "completed"},  # the last change is not lost
    ]
    assert second["events"] == ["coaching_suggestion", "execution_update"]
    assert metrics == {"workflow_id": "f1", "decisions": 19}  # a workflow's newest snapshot only
    # an interval with nothing in it ends the timer: none runs while the workspace is idle
    socketio.end_interval()
    assert socketio.running() == 0 and len(workspace_events()) == 3
    notifier.send(decided(Events(), "e4", "running"))  # quiet again: sent at once
    assert workspace_events()[-1][1]["executions"] == [{"execution_id": "e4", "status": "running"}]
    socketio.end_interval()
    assert socketio.running() == 0


def test_workspaces_are_coalesced_apart_and_a_long_list_of_executions_is_cut_short():
    socketio = Clock()
    notifier = Notifier(socketio, coalesce_s=0.25)
    notifier.send(decided(Events(), "x", "running", workspace="w2"))
    notifier.send(decided(Events(), "e0", "running"))
    for n in range(QUEUE_CHANGED_MAX + 5):
        notifier.send(decided(Events(), f"e{n}", "running"))
    assert [to for e, _, to in socketio.sent if e == "queue_changed"] == ["workspace:w2", "workspace:w1"]
    socketio.end_interval()
    socketio.end_interval()
    [last] = [p for e, p, to in socketio.sent if e == "queue_changed"][2:]
    assert len(last["executions"]) == QUEUE_CHANGED_MAX and last["truncated"] is True
    while socketio.running():
        socketio.end_interval()


def test_without_an_interval_each_transaction_tells_the_workspace_at_once():
    socketio = Recorder()  # e.g. a Celery worker's emitter: no server to run a timer in
    notifier = Notifier(socketio)
    notifier.send(decided(Events(), "e1", "running"))
    notifier.send(decided(Events(), "e1", "completed"))
    assert [p["executions"] for e, p, _ in socketio.sent if e == "queue_changed"] == [
        [{"execution_id": "e1", "status": "running"}],
        [{"execution_id": "e1", "status": "completed"}],
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
        "workflow_level_changed",
        "queue_changed",
        "metrics_update",
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
    with services.command() as uow:
        tx, events = uow.session, uow.events
        ex = executions.get_any(tx, execution_id)
        executions.set_step(ex, "a", status=S.STEP_RUNNING)
        executions.changed(uow, ex, "a")
        events.add("coaching_suggestion", {"suggestion_id": "s"}, execution=execution_id, workspace=ex.workspace_id)
        executions.set_step(ex, "a", status=S.STEP_SUCCEEDED, output={"message": "a"})
        executions.set_step(ex, "b", status=S.STEP_RUNNING)
        executions.changed(uow, ex, "b")
        assert all(type(payload) is not dict for event, payload, _ in events.items if event == "execution_update")
    # made by the commit (before it: the state it describes is the one committed), and sent in the last one's place
    (update,) = [payload for event, payload, _ in events.items if event == "execution_update"]
    assert [event for event, _, _ in events.items] == ["coaching_suggestion", "execution_update"]
    assert update["step_id"] == "b"
    assert {s["step_id"]: s["status"] for s in update["steps"]} == {"a": S.STEP_SUCCEEDED, "b": S.STEP_RUNNING}
    assert update["progress"] == {"done": 1, "total": 2, "percent": 50.0}
    Notifier(socketio).send(events)
    assert [event for event, _, _ in socketio.sent] == ["coaching_suggestion", "execution_update", "queue_changed"]
    # the steps it carried count as pushed: the next change's update carries only what changed after it
    with services.command() as uow:
        ex = executions.get_any(uow.session, execution_id)
        executions.set_step(ex, "b", status=S.STEP_SUCCEEDED)
        executions.changed(uow, ex, "b")
    events = uow.events
    (update,) = [payload for event, payload, _ in events.items if event == "execution_update"]
    assert [s["step_id"] for s in update["steps"]] == ["b"]


def test_a_transaction_rolled_back_makes_no_update(started):
    services, execution_id = started
    with pytest.raises(RuntimeError):
        with services.command() as uow:
            ex = executions.get_any(uow.session, execution_id)
            executions.set_step(ex, "a", status=S.STEP_RUNNING)
            executions.changed(uow, ex, "a")
            raise RuntimeError("rolled back")
    (item,) = uow.events.items
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
