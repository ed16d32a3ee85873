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
