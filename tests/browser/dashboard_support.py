"""REST helpers for the lead-dashboard browser tests: make the evidence (decisions, corrections) a lead reads."""

from __future__ import annotations

from tests.support.live_server import LiveServer

# A one-step workflow: every coaching execution asks exactly one decision and then completes.
MAIL_STEP = {"id": "mail", "type": "action", "tool": "echo", "params": {"to": "a@example.com", "cc": "none"}}
SETTLED = ("waiting_decision", "completed", "failed", "cancelled", "waiting_correction")


def create_workflow(server: LiveServer, name: str, description: str = "") -> dict:
    response = server.post("/api/workflows", json={"name": name, "description": description, "steps": [MAIL_STEP]})
    assert response.status_code == 201, response.text
    return response.json()


def _settle(server: LiveServer, execution_id: str) -> dict:
    def settled():
        body = server.get(f"/api/executions/{execution_id}").json()
        return body if body["status"] in SETTLED else None

    return server.wait_for(settled, message=f"execution {execution_id} to settle")


def decide_once(server: LiveServer, workflow_id: str, decision: str, correction: dict | None = None) -> dict:
    """Starts a coaching execution, answers its one suggestion through REST, waits for it to finish (a rejected
    step waits for a correction: that execution is cancelled)."""
    started = server.post("/api/executions/coaching", json={"workflow_id": workflow_id, "variables": {}})
    assert started.status_code == 201, started.text
    execution_id = started.json()["execution_id"]
    assert _settle(server, execution_id)["status"] == "waiting_decision"
    suggestion = server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]
    assert suggestion is not None, f"execution {execution_id} has no pending suggestion"
    body = {"suggestion_id": suggestion["suggestion_id"], "decision": decision}
    if correction is not None:
        body["correction"] = correction
    answer = server.post(f"/api/executions/{execution_id}/coaching/decision", json=body)
    assert answer.status_code == 200, answer.text
    if decision == "reject":
        assert _settle(server, execution_id)["status"] == "waiting_correction"
        cancelled = server.post(f"/api/executions/{execution_id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
    else:
        assert _settle(server, execution_id)["status"] == "completed"
    return suggestion


def decide_many(server: LiveServer, workflow_id: str, decisions: list[str]) -> None:
    for decision in decisions:
        decide_once(server, workflow_id, decision)


def workflow_metrics(server: LiveServer, workflow_id: str) -> dict:
    response = server.get(f"/api/metrics/workflows/{workflow_id}")
    assert response.status_code == 200, response.text
    return response.json()


def auto_ready_after(server: LiveServer, workflow_id: str) -> int:
    """How many more accepted decisions make the workflow AUTO-ready under its thresholds
    (docs/design.md#metrics-and-learning-levels)."""
    metrics = workflow_metrics(server, workflow_id)
    to_auto = metrics["to_auto"]
    return max(
        to_auto["decisions_to_coaching"],
        to_auto["window_decisions_needed"],
        metrics["evidence"]["decisions_needed_if_all_accepted"],
    )
