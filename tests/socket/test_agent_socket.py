"""An agent's tool calls over Socket.IO against the real server: pushed as tool_call_pending_review and
coaching_suggestion, decided with coaching_decision, the transcript growing live (agent_messages)."""

from __future__ import annotations

import pytest

from tests.socket.test_coaching_socket import Recorder
from tests.support.live_server import LiveServer

EVENTS = (
    "coaching_suggestion",
    "tool_call_pending_review",
    "execution_update",
    "agent_messages",
    "clarification_requested",
)


@pytest.fixture
def agent_server(tmp_path, llm):
    env = {"COACH_LLM_BASE_URL": llm.base_url, "COACH_LLM_MODEL": "scripted"}
    with LiveServer(tmp_path / "server", env=env) as server:
        yield server


def test_tool_calls_are_pushed_and_decided_over_the_socket(agent_server, llm):
    import socketio

    llm.script(
        "Socket",
        [
            {"content": "First echo.", "tool_calls": [{"name": "echo", "arguments": {"n": 1}}]},
            {"tool_calls": [{"name": "echo", "arguments": {"n": 2}}]},
            {"content": "CONFIRM_DATA: all good?"},
            {"content": "Done. STAGE_COMPLETE"},
        ],
    )
    wf = agent_server.post(
        "/api/workflows",
        json={
            "name": "socket agent",
            "steps": [{"id": "agent", "type": "agent", "goal": "Socket test", "tools": ["echo"]}],
        },
    ).json()
    client = socketio.Client(reconnection=False)
    recorder = Recorder(client, EVENTS)
    client.connect(agent_server.base_url, auth={"token": agent_server.token}, wait_timeout=30)
    try:
        execution_id = agent_server.post("/api/executions/coaching", json={"workflow_id": wf["id"]}).json()[
            "execution_id"
        ]
        recorder.join(execution_id)
        first = recorder.wait("tool_call_pending_review", what="for the first call")
        assert first["kind"] == "tool_call" and first["params"] == {"n": 1} and first["rationale"] == "First echo."
        same = recorder.wait("coaching_suggestion", lambda s: s["suggestion_id"] == first["suggestion_id"])
        assert same["tool_call_id"] == first["tool_call_id"]
        ack = recorder.decide(execution_id, first["suggestion_id"], "accept")
        assert ack["ok"] is True, ack
        second = recorder.wait("tool_call_pending_review", lambda s: s["suggestion_id"] != first["suggestion_id"])
        ack = recorder.decide(execution_id, second["suggestion_id"], "correct", correction={"n": 20})
        assert ack["ok"] is True, ack
        again = recorder.decide(execution_id, second["suggestion_id"], "accept")
        assert again["ok"] is False and again["error"]["code"] == "conflict"
        question = recorder.wait("clarification_requested", what="for CONFIRM_DATA")
        assert question["question"] == "all good?" and question["step_id"] == "agent"
        answered = agent_server.post(f"/api/executions/{execution_id}/steps/agent/answer", json={"answer": "yes"})
        assert answered.status_code == 200, answered.text
        recorder.wait("execution_update", lambda u: u["status"] == "completed", what="completed")
        seen = [m for e in recorder.events("agent_messages") for m in e["messages"]]
        assert {m["role"] for m in seen} >= {"assistant", "tool", "user"}
    finally:
        client.disconnect()
    assert llm.repeats() == []
    body = llm.requests[2]["body"]["messages"]
    assert [m["content"] for m in body if m["role"] == "tool"] == ['{"n":1}', '{"n":20}']
