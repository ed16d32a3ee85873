"""`execution_update` carries the states of the steps it changed, as the REST detail shows them
(docs/api.md#real-time-socketio), so a panel keeps its steps in step from the pushes alone."""

from __future__ import annotations

from tests.socket.test_coaching_socket import (
    create_workflow,
    is_step,
    read,
    rest_decide,
    start_coaching,
    three_steps,
)

# the fields of a step's state (services.executions.service._step_state); the REST detail adds what the definition says
STATE_FIELDS = {
    "step_id",
    "status",
    "output",
    "error",
    "attempts",
    "params",
    "decision",
    "policy",
    "run",
    "idempotency_key",
    "started_at",
    "finished_at",
}


def pushed_steps(updates: list[dict]) -> dict[str, dict]:
    """Every pushed step state applied in order of arrival, as a panel applies them: the last one wins."""
    steps: dict[str, dict] = {}
    for update in updates:
        assert isinstance(update.get("steps"), list), update
        for step in update["steps"]:
            assert set(step) == STATE_FIELDS, step
            steps[step["step_id"]] = step
    return steps


def as_rest_shows(server, execution_id: str) -> dict[str, dict]:
    return {s["step_id"]: {k: s[k] for k in STATE_FIELDS} for s in read(server, execution_id)["steps"]}


def test_the_pushed_step_states_add_up_to_the_steps_the_rest_detail_shows(live_server, coach_client):
    execution_id = start_coaching(live_server, create_workflow(live_server, three_steps())["id"])
    client = coach_client()
    client.join(execution_id)
    greet = client.wait("coaching_suggestion", is_step("greet"))

    ack = client.decide(execution_id, greet["suggestion_id"], "accept")
    assert ack["ok"] is True, ack
    assert "steps" not in ack["execution"], "the answer says where the execution is; the steps go to the rooms"
    write = client.wait("coaching_suggestion", is_step("write"))
    # greet ran (its output is what write will write) and write waits: both pushed, as REST shows them now
    client.wait("execution_update", lambda u: u["step_id"] == "write")
    now = pushed_steps(client.events("execution_update"))
    rest = as_rest_shows(live_server, execution_id)
    assert client.events("execution_update")[-1]["gate"] == read(live_server, execution_id)["gate"]
    assert client.events("execution_update")[-1]["gate"]["suggestion_id"] == write["suggestion_id"]
    assert now["greet"] == rest["greet"], (now, rest)
    assert now["greet"]["status"] == "succeeded" and now["greet"]["output"] == {"message": "hi bob"}, now
    assert now["write"] == rest["write"], (now, rest)

    skipped = rest_decide(live_server, execution_id, write["suggestion_id"], "skip")  # REST: the same pushes
    assert skipped.status_code == 200, skipped.text
    last = client.wait("coaching_suggestion", is_step("last"))
    assert client.decide(execution_id, last["suggestion_id"], "manual", manual_output={"n": 2})["ok"] is True
    client.wait("execution_update", lambda u: u["status"] == "completed")

    assert pushed_steps(client.events("execution_update")) == as_rest_shows(live_server, execution_id)


def test_a_cancel_pushes_every_step_it_cancelled(live_server, coach_client):
    execution_id = start_coaching(live_server, create_workflow(live_server, three_steps())["id"])
    client = coach_client()
    client.join(execution_id)
    client.wait("coaching_suggestion", is_step("greet"))
    before = len(client.events("execution_update"))

    cancelled = live_server.post(f"/api/executions/{execution_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    update = client.wait("execution_update", lambda u: u["status"] == "cancelled", since=before)

    rest = as_rest_shows(live_server, execution_id)
    assert {s["step_id"] for s in update["steps"]} == set(rest), update
    assert pushed_steps([update]) == rest


def test_a_step_whose_tool_takes_time_is_pushed_running_then_done(live_server, coach_client):
    execution_id = start_coaching(live_server, create_workflow(live_server, three_steps())["id"])
    client = coach_client()
    client.join(execution_id)
    greet = client.wait("coaching_suggestion", is_step("greet"))
    assert client.decide(execution_id, greet["suggestion_id"], "accept")["ok"] is True
    write = client.wait("coaching_suggestion", is_step("write"))

    # file.write is not run inside the decision's transaction: the runner takes it, and says so
    assert client.decide(execution_id, write["suggestion_id"], "accept")["ok"] is True
    client.wait(
        "execution_update",
        lambda u: any(s["step_id"] == "write" and s["status"] == "running" for s in u["steps"]),
        what="with write running",
    )
    client.wait("coaching_suggestion", is_step("last"))
    client.wait("execution_update", lambda u: u["step_id"] == "last")
    assert pushed_steps(client.events("execution_update"))["write"] == as_rest_shows(live_server, execution_id)["write"]


def test_steps_with_large_outputs_are_left_out_of_the_push_and_read_instead(live_server, coach_client):
    big = "x" * 70_000  # its step's state is over PUSHED_STEPS_MAX (64 KiB of JSON)
    flow = create_workflow(
        live_server,
        {
            "name": "large output",
            "variables": {"who": {"type": "string"}},
            "steps": [
                {"id": "big", "type": "action", "tool": "echo", "params": {"message": big}},
                {"id": "small", "type": "action", "tool": "echo", "params": {"message": "hi"}},
            ],
        },
    )
    execution_id = start_coaching(live_server, flow["id"])
    client = coach_client()
    client.join(execution_id)
    first = client.wait("coaching_suggestion", is_step("big"))
    mark = len(client.events("execution_update"))
    assert client.decide(execution_id, first["suggestion_id"], "accept")["ok"] is True
    client.wait("coaching_suggestion", is_step("small"))
    update = client.wait("execution_update", lambda u: u["step_id"] == "small", since=mark)
    pushed = client.events("execution_update")[mark:]
    # the update of the transaction that ran `big` pushes the state (status, progress, gate), not the steps: a client
    # reads them. (Whether `small`'s gate opened in that transaction or in the runner's next one depends on timing: a
    # later update that changed only `small` may carry it.) No update ever carries `big`.
    assert any("steps" not in u for u in pushed), [sorted(u) for u in pushed]
    assert not any(s["step_id"] == "big" for u in pushed for s in u.get("steps") or []), [sorted(u) for u in pushed]
    assert update["status"] == "waiting_decision" and update["progress"]["done"] == 1, update
    assert update["gate"]["suggestion_id"] == read(live_server, execution_id)["gate"]["suggestion_id"]
    assert as_rest_shows(live_server, execution_id)["big"]["output"] == {"message": big}
