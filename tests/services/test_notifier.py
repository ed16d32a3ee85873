"""The notifier sends an event for an execution and its workspace once, to both rooms together, and the
workspace's summaries after the execution's own events."""
from __future__ import annotations

from services.notifier import Events, Notifier


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
    assert [(e, p) for e, p, _ in events.items] == [("coaching_suggestion", {"suggestion_id": "s"}),
                                                    ("coaching_stats", {"accepted": 2})]


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
        "execution_update", "coaching_suggestion", "coaching_stats", "metrics_update", "workflow_level_changed"]


def step(step_id: str, status: str) -> dict:
    return {"step_id": step_id, "status": status}


def test_one_execution_update_per_execution_and_transaction_carrying_every_changed_step_after_the_suggestion():
    events = Events()
    # a decision: its step's new state, then the runner opens the next step's suggestion and stops there
    events.add("execution_update", {"execution_id": "e1", "status": "running", "step_id": "a", "gate": None,
                                    "steps": [step("a", "running")]}, execution="e1", workspace="w1", plain=True)
    events.add("execution_update", {"execution_id": "e2", "status": "running", "step_id": "x", "gate": None,
                                    "steps": [step("x", "running")]}, execution="e2", workspace="w1", plain=True)
    events.add("coaching_suggestion", {"suggestion_id": "s2", "step_id": "b"}, execution="e1", workspace="w1")
    events.add("execution_update", {"execution_id": "e1", "status": "waiting_decision", "step_id": "b",
                                    "gate": {"kind": "decision"}, "steps": [step("a", "succeeded"),
                                                                            step("b", "waiting")]},
               execution="e1", workspace="w1", plain=True)
    events.add("execution_update", {"execution_id": "e1", "status": "waiting_decision", "step_id": "b",
                                    "gate": {"kind": "decision"}, "steps": [step("c", "skipped")]},
               execution="e1", workspace="w1", plain=True)
    sent = [(event, payload.get("execution_id"), payload.get("step_id")) for event, payload, _ in events.items]
    # the suggestion first, then e1's newest state; e2's update is another execution's, untouched
    assert sent == [("execution_update", "e2", "x"), ("coaching_suggestion", None, "b"),
                    ("execution_update", "e1", "b")]
    merged = events.items[-1][1]
    assert merged["status"] == "waiting_decision" and merged["gate"] == {"kind": "decision"}
    # every step the transaction changed, each in its newest state
    assert merged["steps"] == [step("a", "succeeded"), step("b", "waiting"), step("c", "skipped")]


def test_an_update_without_steps_is_sent_as_it_is_beside_one_with_steps():
    events = Events()
    events.add("execution_update", {"execution_id": "e1", "status": "running", "steps": [step("a", "running")]},
               execution="e1", plain=True)
    events.add("execution_update", {"execution_id": "e1", "status": "paused"}, execution="e1", plain=True)
    assert [payload for _, payload, _ in events.items] == [
        {"execution_id": "e1", "status": "running", "steps": [step("a", "running")]},
        {"execution_id": "e1", "status": "paused"}]
