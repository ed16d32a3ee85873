"""Approvals against the real server process: the workspace room's events, and durable deadlines and approvals
across a crash (SIGKILL) and a restart."""

from __future__ import annotations

import time

from tests.socket.test_coaching_socket import Recorder, wait_status
from tests.support.live_server import LiveServer

WATCHED = ("approval_requested", "approval_decided", "execution_update", "queue_changed")


def approval_workflow(server: LiveServer, **approval) -> str:
    definition = {
        "name": f"approve {time.monotonic_ns()}",
        "steps": [
            {"id": "total", "tool": "echo", "params": {"sum": 42}},
            {"id": "sign_off", "type": "approval", "message": "Pay {{ steps.total.output.sum }}?", **approval},
            {"id": "after", "tool": "echo", "params": {"done": True}},
        ],
    }
    response = server.post("/api/workflows", json=definition)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def start(server: LiveServer, workflow_id: str) -> str:
    response = server.post("/api/executions/", json={"workflow_id": workflow_id, "mode": "normal"})
    assert response.status_code == 201, response.text
    return response.json()["execution_id"]


def approval_of(server: LiveServer, execution_id: str) -> dict:
    ex = wait_status(server, execution_id, ("waiting_approval",))
    return server.get(f"/api/approvals/{ex['gate']['approval_id']}").json()


def audit_actions(server: LiveServer, execution_id: str, action: str) -> list[dict]:
    return server.get(f"/api/audit?execution_id={execution_id}&action={action}").json()["items"]


def test_approval_requested_and_decided_reach_the_workspace_room(live_server, sio_client):
    dashboard = Recorder(sio_client(), WATCHED)
    assert dashboard.call("join_workspace", {})["ok"] is True
    wf = approval_workflow(live_server)
    execution_id = start(live_server, wf)
    requested = dashboard.wait("approval_requested", lambda a: a["execution_id"] == execution_id)
    assert (requested["status"], requested["message"], requested["kind"]) == ("pending", "Pay 42?", "step")
    assert set(requested) >= {
        "approval_id",
        "step_id",
        "approvers",
        "quorum",
        "separate_duties",
        "decisions",
        "deadline",
        "on_timeout",
        "tool",
        "params",
        "policy",
    }
    response = live_server.post(f"/api/approvals/{requested['approval_id']}", json={"decision": "approve"})
    assert response.status_code == 200, response.text
    decided = dashboard.wait("approval_decided", lambda a: a["approval_id"] == requested["approval_id"])
    assert decided["status"] == "approved" and decided["decisions"][0]["user"] == live_server.admin_email
    # the execution's own updates go to its room; the workspace's hears that its queue changed, with the status
    dashboard.wait("queue_changed", lambda c: {"execution_id": execution_id, "status": "completed"} in c["executions"])
    assert dashboard.count("execution_update") == 0

    cancelled = start(live_server, wf)  # a cancel pushes approval_decided (expired): queues drop the item
    pending = dashboard.wait("approval_requested", lambda a: a["execution_id"] == cancelled)
    assert live_server.post(f"/api/executions/{cancelled}/cancel").status_code == 200
    expired = dashboard.wait("approval_decided", lambda a: a["approval_id"] == pending["approval_id"])
    assert expired["status"] == "expired"


def test_a_vote_toward_a_quorum_reaches_the_workspace_room_with_the_approval_still_pending(live_server, sio_client):
    dashboard = Recorder(sio_client(), WATCHED)
    assert dashboard.call("join_workspace", {})["ok"] is True
    wf = approval_workflow(live_server, quorum=2)
    execution_id = start(live_server, wf)
    requested = dashboard.wait("approval_requested", lambda a: a["execution_id"] == execution_id)
    assert requested["quorum"] == 2 and requested["decisions"] == []
    response = live_server.post(f"/api/approvals/{requested['approval_id']}", json={"decision": "approve"})
    assert response.status_code == 200, response.text
    voted = dashboard.wait("approval_decided", lambda a: a["approval_id"] == requested["approval_id"])
    assert voted["status"] == "pending", voted
    assert [(d["decision"], d["user"]) for d in voted["decisions"]] == [("approve", live_server.admin_email)]


def test_a_deadline_due_while_the_server_was_down_fires_once_after_the_restart(live_server):
    wf = approval_workflow(live_server, timeout_s=1, on_timeout="reject")
    execution_id = start(live_server, wf)
    approval = approval_of(live_server, execution_id)
    assert approval["status"] == "pending" and approval["deadline"]

    live_server.kill()  # SIGKILL: nothing runs until the restart, and the deadline passes meanwhile
    time.sleep(1.5)
    live_server.restart()

    ex = wait_status(live_server, execution_id, ("failed",))
    assert ex["error"]["message"].startswith("rejected by system"), ex
    fired = live_server.get(f"/api/approvals/{approval['approval_id']}").json()
    assert fired["status"] == "rejected" and [d["user"] for d in fired["decisions"]] == ["system"]
    time.sleep(2.5)  # the scanner went round twice since: nothing fires again
    assert len(audit_actions(live_server, execution_id, "approval_timeout")) == 1
    assert live_server.get(f"/api/executions/{execution_id}").json()["status"] == "failed"


def test_an_approval_survives_a_crash_and_can_still_be_decided(live_server):
    """OpenAI Agents #4244: a pending approval must not be lost with the process."""
    wf = approval_workflow(live_server)
    execution_id = start(live_server, wf)
    approval = approval_of(live_server, execution_id)

    live_server.kill()
    live_server.restart()

    pending = live_server.get("/api/approvals?status=pending").json()["items"]
    assert [a["approval_id"] for a in pending] == [approval["approval_id"]]
    response = live_server.post(f"/api/approvals/{approval['approval_id']}", json={"decision": "approve"})
    assert response.status_code == 200, response.text
    ex = wait_status(live_server, execution_id, ("completed",))
    assert {s["step_id"]: s["status"] for s in ex["steps"]} == {
        "total": "succeeded",
        "sign_off": "succeeded",
        "after": "succeeded",
    }
