"""Gate deadlines against the real server process: the scanner fires a suggestion's deadline and pushes it, and a
deadline that falls due while the server is down (SIGKILL) fires exactly once after the restart."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from tests.socket.test_approvals_live import audit_actions
from tests.socket.test_coaching_socket import Recorder, wait_status
from tests.support.live_server import LiveServer

WATCHED = ("gate_timed_out", "execution_update", "coaching_suggestion", "queue_changed")


def coached(server: LiveServer, timeout_s: float, action: str) -> tuple[str, dict]:
    """A coaching execution waiting at its first suggestion, which has a deadline: (execution id, suggestion)."""
    definition = {
        "name": f"deadline {time.monotonic_ns()}",
        "steps": [
            {"id": "a", "tool": "echo", "params": {"n": 1}, "human_timeout_s": timeout_s, "on_human_timeout": action},
            {"id": "c", "tool": "echo", "params": {"n": 2}},
        ],
    }
    response = server.post("/api/workflows", json=definition)
    assert response.status_code == 201, response.text
    response = server.post("/api/executions/coaching", json={"workflow_id": response.json()["id"]})
    assert response.status_code == 201, response.text
    execution_id = response.json()["execution_id"]
    wait_status(server, execution_id, ("waiting_decision",))
    suggestion = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    assert suggestion["step_id"] == "a" and suggestion["deadline"] and suggestion["on_timeout"] == action
    return execution_id, suggestion


def test_a_timed_out_suggestion_is_pushed_to_the_execution_room_and_the_workspace_room_is_told(live_server, sio_client):
    dashboard, panel = Recorder(sio_client(), WATCHED), Recorder(sio_client(), WATCHED)
    assert dashboard.call("join_workspace", {})["ok"] is True
    execution_id, suggestion = coached(live_server, 1, "skip")
    assert panel.call("join_execution", {"execution_id": execution_id})["ok"] is True
    fired = panel.wait("gate_timed_out", lambda e: e["execution_id"] == execution_id)
    assert (fired["step_id"], fired["kind"], fired["action"], fired["suggestion_id"]) == (
        "a",
        "decision",
        "skip",
        suggestion["suggestion_id"],
    )
    nxt = panel.wait("coaching_suggestion", lambda s: s["execution_id"] == execution_id and s["step_id"] == "c")
    assert nxt["status"] == "pending"
    dashboard.wait(
        "queue_changed",
        lambda c: "gate_timed_out" in c["events"] and execution_id in [e["execution_id"] for e in c["executions"]],
    )
    assert (dashboard.count("gate_timed_out"), dashboard.count("coaching_suggestion")) == (0, 0)


def test_a_deadline_due_while_the_server_was_down_fires_once_after_the_restart(live_server):
    execution_id, suggestion = coached(live_server, 2, "skip")

    killed_at = datetime.now(UTC)
    live_server.kill()  # SIGKILL: nothing runs until the restart, and the deadline passes meanwhile
    time.sleep(2.5)
    live_server.restart()

    ex = wait_status(live_server, execution_id, ("waiting_decision",))
    nxt = live_server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    ex = live_server.get(f"/api/executions/{execution_id}").json()
    steps = {s["step_id"]: s for s in ex["steps"]}
    assert nxt["step_id"] == "c" and steps["a"]["status"] == "skipped", ex
    time.sleep(2.5)  # the scanner went round twice since: nothing fires again
    fired = audit_actions(live_server, execution_id, "gate_timeout")
    assert len(fired) == 1 and fired[0]["actor"] == "system" and fired[0]["target_id"] == suggestion["suggestion_id"]
    assert datetime.fromisoformat(fired[0]["created_at"].replace("Z", "+00:00")) >= killed_at  # after the restart
    stats = live_server.get(f"/api/executions/{execution_id}/coaching/stats").json()
    assert stats["timed_out"] == 1 and stats["skipped"] == 0
