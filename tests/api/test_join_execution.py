"""Joining an execution's room over Socket.IO loses no change: one committed while the client joins is either in the
join's answer (and the pending suggestion sent with it) or pushed to the client after it. (That a client of another
workspace cannot join: tests/socket/test_socket_auth.py, against a live server.)"""

from __future__ import annotations

import pytest

import api.sockets as sockets

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


def test_a_decision_made_while_a_client_joins_reaches_that_client(app, api, admin_token, monkeypatch):
    wf = api.workflow(
        [
            {"id": f"s{i}", "name": f"Step {i}", "type": "action", "tool": "echo", "params": {"message": f"m{i}"}}
            for i in (1, 2, 3)
        ]
    )
    execution_id = api.start(wf["id"], mode="coaching")["execution_id"]
    api.settle(execution_id)
    first = api.ok("GET", f"/api/executions/{execution_id}/coaching/suggestion")["suggestion"]
    assert first["step_id"] == "s1"

    joining = sockets.join_room

    def join_room_as_another_operator_decides(room, *args, **kwargs):
        # another operator accepts step 1 at this very moment, by REST: committed and pushed to the room now
        api.ok(
            "POST",
            f"/api/executions/{execution_id}/coaching/decision",
            {"suggestion_id": first["suggestion_id"], "decision": "accept"},
        )
        return joining(room, *args, **kwargs)

    monkeypatch.setattr(sockets, "join_room", join_room_as_another_operator_decides)
    client = app.extensions["socketio"].test_client(app, auth={"token": admin_token})
    assert client.is_connected()
    client.get_received()
    ack = client.emit("join_execution", {"execution_id": execution_id}, callback=True)
    assert ack["ok"] is True, ack
    # step 2's suggestion is opened by the decision's transaction, or by the runner's next one when the decision's
    # time slice ran out first (a loaded machine): either way it reaches the client once the runner is done
    app.extensions["coach"].runner.wait_idle(10)
    received = client.get_received()
    client.disconnect()

    # what this client now knows: the join's answer, then what it was sent
    suggestions = [e["args"][0] for e in received if e["name"] == "coaching_suggestion"]
    assert ack["execution"]["progress"]["done"] == 1, ack  # step 1 accepted and run
    assert [s["step_id"] for s in suggestions if s["status"] == "pending"][-1:] == ["s2"], suggestions
    assert "s1" not in [s["step_id"] for s in suggestions], "step 1's decided suggestion was sent as pending"


def test_the_join_answer_carries_the_gate_so_a_held_decision_is_not_missed(api, app, admin_token):
    """A decision held for its undo window changes neither the status nor the progress: the join's answer carries
    the gate, by which a client whose copy still shows the suggestion knows to read again (a flaky browser test found
    a page that decided over REST while its connection came up, then missed the held gate)."""
    assert api.ok("PUT", "/api/workspace/undo", {"window_s": 60})["window_s"] == 60
    wf = api.workflow([{"id": "wipe", "tool": "shell.run", "params": {"command": ["true"]}}])
    execution_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf["id"]}, status=201)["execution_id"]
    api.settle(execution_id)
    suggestion = api.ok("GET", f"/api/executions/{execution_id}/coaching/suggestion")["suggestion"]
    held = api.ok(
        "POST",
        f"/api/executions/{execution_id}/coaching/decision",
        {"suggestion_id": suggestion["suggestion_id"], "decision": "accept"},
    )
    assert held["decision"]["held_until"], held
    client = app.extensions["socketio"].test_client(app, auth={"token": admin_token})
    try:
        ack = client.emit("join_execution", {"execution_id": execution_id}, callback=True)
    finally:
        client.disconnect()
    assert ack["execution"]["status"] == "waiting_decision"
    assert (
        ack["execution"]["gate"]["kind"] == "held"
        and ack["execution"]["gate"]["suggestion_id"] == suggestion["suggestion_id"]
    )
    api.ok("PUT", "/api/workspace/undo", {"window_s": 0})
