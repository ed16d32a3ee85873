"""End-to-end against the real server process (`python wsgi.py`): HTTP, Socket.IO and a crash-restart."""

from __future__ import annotations

import queue
import time
import uuid
from pathlib import Path

import yaml

from tests.support.live_server import REPO_ROOT, LiveServer

TERMINAL = ("completed", "failed", "cancelled")


def create_workflow(server: LiveServer, definition: dict) -> dict:
    response = server.post("/api/workflows", json=definition)
    assert response.status_code == 201, response.text
    return response.json()


def start(server: LiveServer, workflow_id: str, variables: dict | None = None) -> str:
    response = server.post(
        "/api/executions/", json={"workflow_id": workflow_id, "variables": variables or {}, "mode": "normal"}
    )
    assert response.status_code == 201, response.text
    return response.json()["execution_id"]


def read(server: LiveServer, execution_id: str) -> dict:
    response = server.get(f"/api/executions/{execution_id}")
    assert response.status_code == 200, response.text
    return response.json()


def wait_status(server: LiveServer, execution_id: str, statuses: tuple[str, ...], timeout: float = 30) -> dict:
    def reached():
        body = read(server, execution_id)
        return body if body["status"] in statuses else None

    return server.wait_for(reached, timeout, message=f"execution {execution_id} in {statuses}")


def ask_then_echo(name: str = "ask then echo") -> dict:
    return {
        "name": name,
        "steps": [
            {"id": "ask", "type": "human_input", "question": "Which colour?"},
            {
                "id": "say",
                "type": "action",
                "tool": "echo",
                "depends_on": ["ask"],
                "params": {"message": "picked {{ steps.ask.output.answer }}"},
            },
        ],
    }


def test_a_workflow_created_over_http_runs_to_completed(live_server):
    wf = create_workflow(
        live_server,
        {
            "name": "Greeting",
            "variables": {"who": {"type": "string", "default": "world"}},
            "steps": [
                {"id": "greet", "type": "action", "tool": "echo", "params": {"message": "hi {{ vars.who }}"}},
                {
                    "id": "check",
                    "type": "validation",
                    "depends_on": ["greet"],
                    "condition": "steps.greet.output.message == 'hi there'",
                },
            ],
        },
    )
    execution_id = start(live_server, wf["id"], {"who": "there"})

    body = wait_status(live_server, execution_id, TERMINAL)

    assert body["status"] == "completed", body
    steps = {s["step_id"]: s for s in body["steps"]}
    assert steps["greet"]["status"] == "succeeded"
    assert steps["greet"]["output"]["message"] == "hi there"
    assert steps["check"]["status"] == "succeeded"
    assert body["progress"]["done"] == body["progress"]["total"] == 2
    listed = live_server.get(f"/api/executions/?workflow_id={wf['id']}").json()
    assert [e["execution_id"] for e in listed["items"]] == [execution_id]


def test_an_invalid_definition_is_an_ordinary_422_with_no_traceback_in_the_servers_log(live_server):
    before = live_server.stderr_path.read_text()
    refused = live_server.post("/api/workflows", json={"name": "typo", "steps": [{"id": "a", "tool": "ecko"}]})
    assert refused.status_code == 422 and "unknown tool 'ecko'" in refused.text
    # the next request is answered after the refusal was logged, if it was: anything printed is in the file by now
    assert live_server.get("/healthz").status_code == 200
    logged = live_server.stderr_path.read_text()[len(before) :]
    assert "Traceback" not in logged and "ValidationFailed" not in logged, logged


def test_demo_service_check_calls_the_servers_own_healthz(live_server):
    definition = yaml.safe_load((REPO_ROOT / "demo" / "service_check.yaml").read_text(encoding="utf-8"))
    definition["variables"]["base_url"]["default"] = live_server.base_url
    wf = create_workflow(live_server, definition)
    execution_id = start(live_server, wf["id"])

    body = wait_status(live_server, execution_id, TERMINAL, timeout=20)

    assert body["status"] == "completed", body
    steps = {s["step_id"]: s for s in body["steps"]}
    assert steps["ping"]["output"]["status"] == 200
    assert steps["ping"]["output"]["json"] == {"status": "ok"}
    assert [steps[k]["status"] for k in ("ping", "check", "record")] == ["succeeded"] * 3
    log = Path(live_server.workspace_data_dir(), "logs", "service-check.log").read_text(encoding="utf-8")
    assert f"{execution_id} status=200" in log


def test_a_joined_client_receives_execution_updates_until_completed(live_server, sio_client):
    wf = create_workflow(live_server, ask_then_echo())
    execution_id = start(live_server, wf["id"])
    waiting = wait_status(live_server, execution_id, ("waiting_clarification",) + TERMINAL)
    assert waiting["status"] == "waiting_clarification", waiting

    updates: queue.Queue = queue.Queue()
    client = sio_client()
    client.on("execution_update", updates.put)
    ack = client.call("join_execution", {"execution_id": execution_id}, timeout=30)
    assert ack["ok"] is True, ack
    assert ack["execution"]["execution_id"] == execution_id
    assert ack["execution"]["status"] == "waiting_clarification"
    assert updates.empty(), "nothing happened yet, so nothing should have been pushed"

    answered = live_server.post(f"/api/executions/{execution_id}/steps/ask/answer", json={"answer": "x"})
    assert answered.status_code == 200, answered.text

    seen = []
    deadline = time.monotonic() + 30
    while not any(u["status"] == "completed" for u in seen):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no completed execution_update within 30 s; got {seen}"
        try:
            seen.append(updates.get(timeout=remaining))
        except queue.Empty:
            pass
    assert all(u["execution_id"] == execution_id for u in seen), seen
    completed = next(u for u in seen if u["status"] == "completed")
    assert completed["progress"]["done"] == completed["progress"]["total"] == 2
    assert read(live_server, execution_id)["steps"][1]["output"]["message"] == "picked x"


def test_a_client_only_gets_updates_of_the_execution_it_joined(live_server, sio_client):
    wf = create_workflow(live_server, ask_then_echo())
    joined, other = start(live_server, wf["id"]), start(live_server, wf["id"])
    for execution_id in (joined, other):
        wait_status(live_server, execution_id, ("waiting_clarification",))
    updates: queue.Queue = queue.Queue()
    client = sio_client()
    client.on("execution_update", updates.put)
    assert client.call("join_execution", {"execution_id": joined}, timeout=30)["ok"] is True

    # the other one first: once the joined one has completed, any push about the other would have arrived
    for execution_id in (other, joined):
        live_server.post(f"/api/executions/{execution_id}/steps/ask/answer", json={"answer": "y"})
        wait_status(live_server, execution_id, ("completed",))
    seen = []
    deadline = time.monotonic() + 30
    while not any(u["status"] == "completed" for u in seen) and time.monotonic() < deadline:
        try:
            seen.append(updates.get(timeout=0.1))
        except queue.Empty:
            pass
    assert any(u["status"] == "completed" for u in seen), seen
    assert {u["execution_id"] for u in seen} == {joined}, seen


def test_joining_an_unknown_execution_is_refused(live_server, sio_client):
    client = sio_client()
    ack = client.call("join_execution", {"execution_id": uuid.uuid4().hex}, timeout=30)
    assert ack["ok"] is False, ack
    assert ack["error"]["code"] == "not_found", ack
    assert ack["error"]["message"]
    # the connection is still usable afterwards
    assert client.call("join_execution", {"execution_id": ""}, timeout=30)["ok"] is False


def test_a_waiting_execution_survives_a_crash_and_completes_after_restart(live_server):
    wf = create_workflow(live_server, ask_then_echo("durable"))
    execution_id = start(live_server, wf["id"])
    before = wait_status(live_server, execution_id, ("waiting_clarification",) + TERMINAL)
    assert before["status"] == "waiting_clarification", before
    assert before["gate"]["question"] == "Which colour?"

    live_server.kill()  # SIGKILL: no shutdown code runs
    live_server.restart()

    after = read(live_server, execution_id)
    assert after["status"] == "waiting_clarification", after
    assert after["gate"] == before["gate"]
    assert [s["status"] for s in after["steps"]] == [s["status"] for s in before["steps"]]

    answered = live_server.post(f"/api/executions/{execution_id}/steps/ask/answer", json={"answer": "blue"})
    assert answered.status_code == 200, answered.text
    done = wait_status(live_server, execution_id, TERMINAL)
    assert done["status"] == "completed", done
    assert done["steps"][1]["output"]["message"] == "picked blue"
