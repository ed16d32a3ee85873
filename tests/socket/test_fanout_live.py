"""Fan-out that grows with decisions + tabs (docs/api.md#real-time-socketio): a tab in the workspace's room only hears
one small, coalesced `queue_changed` per interval, never an execution's own events; a tab in the execution's room
still gets every one of them, in order. Against the real server in each async mode."""

from __future__ import annotations

import time

import pytest

from tests.socket.conftest import disconnect_all
from tests.socket.test_coaching_socket import Recorder, create_workflow, is_step, start_coaching, wait_pending
from tests.support.live_server import LiveServer

# an execution's own events: none of them may reach a tab that is only in the workspace's room
OWN = ("coaching_suggestion", "execution_update", "suggestion_decided", "coaching_stats")
STEPS = 12
INTERVAL_S = 1.0  # COACH_QUEUE_CHANGED_S of these servers: the decisions below come well within a few of them


class Ordered(Recorder):
    """A Recorder that also keeps the order of every event it received: (name, step_id)."""

    def __init__(self, client, events):
        self.order: list[tuple[str, str | None]] = []
        super().__init__(client, events)

    def _handler(self, name):
        handle = super()._handler(name)

        def ordered(data=None):
            self.order.append((name, data.get("step_id") if isinstance(data, dict) else None))
            handle(data)

        return ordered


def echoes(n: int) -> dict:
    return {
        "name": f"echoes {time.monotonic_ns()}",
        "variables": {"who": {"type": "string", "default": "x"}},
        "steps": [{"id": f"s{i}", "tool": "echo"} for i in range(n)],
    }


@pytest.fixture(params=["gevent", "threading", "eventlet"])
def server(request, tmp_path):
    with LiveServer(tmp_path / "server", async_mode=request.param, env={"COACH_QUEUE_CHANGED_S": str(INTERVAL_S)}) as s:
        yield s


def test_the_workspace_room_hears_few_small_events_and_the_execution_room_every_event_in_order(server):
    import socketio

    clients: list[socketio.Client] = []

    def recorder() -> Ordered:
        client = socketio.Client(reconnection=False)
        clients.append(client)
        client.connect(server.base_url, auth={"token": server.token}, wait_timeout=10)
        return Ordered(client, (*OWN, "queue_changed", "metrics_update"))

    try:
        wf = create_workflow(server, echoes(STEPS))
        execution_id = start_coaching(server, wf["id"])
        wait_pending(server, execution_id, "s0")
        queue, panel = recorder(), recorder()
        assert queue.call("join_workspace", {})["ok"] is True
        panel.join(execution_id)
        # the panel decides each suggestion as soon as it has it, as fast as the server answers
        started = time.monotonic()
        for i in range(STEPS):
            sug = panel.wait("coaching_suggestion", is_step(f"s{i}"), what=f"for s{i}")
            ack = panel.decide(execution_id, sug["suggestion_id"], "accept")
            assert ack.get("ok", True) and "error" not in ack, ack
        panel.wait("execution_update", lambda u: u["status"] == "completed", what="at the end")
        # the last change is never lost: a queue_changed says the execution completed
        queue.wait(
            "queue_changed",
            lambda c: {"execution_id": execution_id, "status": "completed"} in c["executions"],
            timeout=INTERVAL_S + 30,
            what="saying the execution completed",
        )
        elapsed = time.monotonic() - started
        time.sleep(INTERVAL_S + 0.5)  # an interval's end may still send what came last: nothing else may follow

        # the workspace's tab: no execution's own event, and at most one queue_changed per interval (plus the first,
        # sent at once) where the panel's decisions made STEPS suggestions and as many updates
        assert {name: queue.count(name) for name in OWN} == dict.fromkeys(OWN, 0)
        changes = queue.events("queue_changed")
        assert 1 <= len(changes) <= 2 + elapsed / INTERVAL_S, (len(changes), elapsed)
        if elapsed < INTERVAL_S * STEPS / 3:  # (the usual case: a slow machine may take an interval per decision)
            assert len(changes) < STEPS / 2, changes
        for change in changes:
            assert set(change) == {"workspace_id", "executions", "truncated", "events", "at"}, change
            assert [e["execution_id"] for e in change["executions"]] == [execution_id], change
            assert set(change["events"]) <= {*OWN, "clarification_requested"}, change
        assert changes[-1]["executions"] == [{"execution_id": execution_id, "status": "completed"}]
        # the workflow's metrics: coalesced too, the newest snapshot last
        metrics = queue.events("metrics_update")
        assert 1 <= len(metrics) <= 2 + elapsed / INTERVAL_S and metrics[-1]["decisions"] == STEPS, metrics

        # the panel's tab: every suggestion, each decision before the next suggestion, the completion last
        suggested = [s["step_id"] for s in panel.events("coaching_suggestion")]
        assert suggested == [f"s{i}" for i in range(STEPS)], suggested
        assert [d["step_id"] for d in panel.events("suggestion_decided")] == suggested
        order = [(name, step) for name, step in panel.order if name in ("coaching_suggestion", "suggestion_decided")]
        assert order == [
            (name, f"s{i}") for i in range(STEPS) for name in ("coaching_suggestion", "suggestion_decided")
        ]
        assert panel.events("execution_update")[-1]["status"] == "completed"
        assert panel.count("coaching_stats") >= STEPS
    finally:
        disconnect_all(clients)
