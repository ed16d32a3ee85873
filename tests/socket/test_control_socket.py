"""Interactive control against the real server process: clarification_requested is pushed, the socket control
events (pause_execution, apply_correction, resume_execution) ack like their REST routes, and an execution paused
for clarification survives a SIGKILL restart and can be resumed."""

from __future__ import annotations

from tests.socket.test_coaching_socket import WATCHED, Recorder, assert_error, read, wait_status  # noqa: F401

EVENTS = WATCHED + ("clarification_requested",)
STEPS = [
    {
        "id": "check",
        "tool": "echo",
        "params": {"message": "x"},
        "requires_clarification": True,
        "clarification_question": "Is x right?",
    },
    {"id": "after", "tool": "echo", "params": {"message": "told {{ feedback.check }}"}},
]


def plan(server, steps=STEPS) -> str:
    response = server.post("/api/plans", json={"steps": steps})
    assert response.status_code == 201, response.text
    plan_id = response.json()["plan_id"]
    assert server.post(f"/api/plans/{plan_id}/approve").status_code == 200
    return plan_id


def test_clarification_is_pushed_and_the_socket_control_events_steer_the_execution(live_server, sio_client):
    client = Recorder(sio_client(), EVENTS)
    plan_id = plan(live_server)
    client.join(plan_id)
    assert live_server.post(f"/api/plans/{plan_id}/execute", json={}).status_code == 200
    asked = client.wait("clarification_requested", what="for the requires_clarification step")
    assert asked == {"execution_id": plan_id, "step_id": "check", "question": "Is x right?"}

    # bad bodies and unknown executions answer like REST
    assert_error(
        client.call(
            "apply_correction",
            {"execution_id": plan_id, "step_id": "check", "correction": {"updated_step": {"id": "y"}}},
        ),
        "validation_failed",
    )
    assert_error(client.call("resume_execution", {"execution_id": "nope"}), "not_found")
    assert_error(client.call("pause_execution", {"execution_id": plan_id}), "validation_failed")

    ack = client.call(
        "apply_correction",
        {"execution_id": plan_id, "step_id": "check", "correction": {"updated_step": {"params": {"message": "y"}}}},
    )
    assert ack["ok"] is True and ack["execution"]["state"] == "waiting_correction", ack
    ack = client.call("pause_execution", {"execution_id": plan_id, "step_id": "after", "question": "And then?"})
    assert ack["ok"] is True and ack["execution"]["breakpoints"] == {"after": "And then?"}, ack
    ack = client.call("resume_execution", {"execution_id": plan_id, "feedback": "yes"})
    assert ack["ok"] is True, ack
    asked = client.wait("clarification_requested", lambda e: e["step_id"] == "after", what="at the breakpoint")
    assert asked["question"] == "And then?"
    assert client.call("resume_execution", {"execution_id": plan_id})["ok"] is True
    client.wait("execution_update", lambda u: u["status"] == "completed", what="after the resume")
    steps = read(live_server, plan_id)["steps"]
    assert [s["output"] for s in steps] == [{"message": "y"}, {"message": "told yes"}]
    assert_error(client.call("resume_execution", {"execution_id": plan_id}), "conflict")


def test_a_plan_paused_for_clarification_survives_a_crash_and_resumes(live_server, sio_client):
    plan_id = plan(live_server)
    assert live_server.post(f"/api/plans/{plan_id}/execute", json={}).status_code == 200
    wait_status(live_server, plan_id, ("waiting_clarification",))
    draft = live_server.post("/api/plans", json={"steps": STEPS}).json()["plan_id"]  # never executed

    live_server.kill()  # SIGKILL: no shutdown code runs
    live_server.restart()

    state = live_server.get(f"/api/plans/{plan_id}/execution-state").json()
    assert (state["state"], state["step_id"], state["question"]) == ("waiting_clarification", "check", "Is x right?")
    assert live_server.get(f"/api/plans/{draft}/status").json()["status"] == "draft"  # the restart ran no draft
    client = Recorder(sio_client(), EVENTS)
    client.join(plan_id)
    response = live_server.post(f"/api/plans/{plan_id}/resume", json={"feedback": "after the crash"})
    assert response.status_code == 200, response.text
    client.wait("execution_update", lambda u: u["status"] == "completed", what="after the restart")
    assert read(live_server, plan_id)["steps"][1]["output"] == {"message": "told after the crash"}
    assert live_server.get(f"/api/plans/{draft}/status").json()["status"] == "draft"
