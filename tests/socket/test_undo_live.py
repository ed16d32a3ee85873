"""Taking a decision back against the real server process: one panel accepts an external call, which is held for the
undo window; it takes the decision back over the socket (`coaching_undo`), and a second panel watching the same
execution is shown the suggestion again, pending, with the same id."""

from __future__ import annotations

import time

import pytest
import socketio

from tests.socket.conftest import disconnect_all
from tests.socket.test_coaching_socket import Recorder, wait_status
from tests.support.live_server import LiveServer

WATCHED = ("coaching_suggestion", "execution_update", "decision_undone")


@pytest.fixture
def held_server(tmp_path):
    """A live server whose risky decisions are held for 60 s (nothing releases them during a test)."""
    with LiveServer(tmp_path / "server", demo="0", env={"COACH_UNDO_WINDOW_S": "60"}) as server:
        yield server


def test_a_second_panel_sees_the_suggestion_again_after_an_undo(held_server):
    clients = []

    def panel() -> Recorder:
        client = socketio.Client(reconnection=False)
        clients.append(client)
        client.connect(held_server.base_url, auth={"token": held_server.token}, wait_timeout=30)
        return Recorder(client, WATCHED)

    try:
        definition = {
            "name": f"undo {time.monotonic_ns()}",
            "steps": [
                {"id": "pay", "tool": "http.request", "params": {"method": "POST", "url": "http://127.0.0.1:9/pay"}}
            ],
        }
        response = held_server.post("/api/workflows", json=definition)
        assert response.status_code == 201, response.text
        response = held_server.post("/api/executions/coaching", json={"workflow_id": response.json()["id"]})
        execution_id = response.json()["execution_id"]
        wait_status(held_server, execution_id, ("waiting_decision",))
        suggestion = held_server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
        assert suggestion["risk"] == "external"

        deciding, watching = panel(), panel()
        for recorder in (deciding, watching):
            assert recorder.call("join_execution", {"execution_id": execution_id})["ok"] is True
        pushed_before = watching.count("coaching_suggestion")

        decided = deciding.call(
            "coaching_decision",
            {"execution_id": execution_id, "decision": "accept", "suggestion_id": suggestion["suggestion_id"]},
        )
        assert decided["ok"] is True and decided["decision"]["held_until"], decided
        watching.wait(
            "execution_update",
            lambda e: e["execution_id"] == execution_id and (e.get("gate") or {}).get("kind") == "held",
            what="with the held gate",
        )

        undone = deciding.call(
            "coaching_undo", {"execution_id": execution_id, "suggestion_id": suggestion["suggestion_id"]}
        )
        assert undone["ok"] is True and undone["suggestion"]["status"] == "pending", undone
        again = watching.wait(
            "coaching_suggestion",
            lambda s: s["suggestion_id"] == suggestion["suggestion_id"],
            since=pushed_before,
            what="pushed again after the undo",
        )
        assert again["status"] == "pending" and again["params"] == suggestion["params"]
        assert watching.wait("decision_undone")["decision"] == "accept"

        # an undo of the same suggestion again: nothing is held any more
        twice = deciding.call(
            "coaching_undo", {"execution_id": execution_id, "suggestion_id": suggestion["suggestion_id"]}
        )
        assert twice["ok"] is False and twice["error"]["code"] == "nothing_to_undo"
    finally:
        disconnect_all(clients)
