"""A coaching session survives a crash of the real server process (SIGKILL) and a restart (docs/design.md#concepts,
§5)."""

from __future__ import annotations

from tests.socket.test_coaching_socket import (
    create_workflow,
    expected_stats,
    is_step,
    read,
    rest_decide,
    start_coaching,
    stats,
    steps_of,
    wait_pending,
    wait_status,
)


def test_the_pending_suggestion_and_the_stats_survive_a_crash(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    before_client = coach_client()
    before_client.join(execution_id)
    assert before_client.decide(execution_id, greet["suggestion_id"], "reject", feedback="not like that")["ok"]
    fix = before_client.wait("coaching_suggestion", is_step("greet", not_id=greet["suggestion_id"]))
    assert (
        before_client.decide(execution_id, fix["suggestion_id"], "manual", manual_output={"message": "hi by hand"})[
            "ok"
        ]
        is True
    )
    write = wait_pending(live_server, execution_id, "write")
    before_stats = stats(live_server, execution_id)
    assert before_stats == expected_stats(suggestions_made=3, rejected=1, manual_executions=1)

    live_server.kill()  # SIGKILL: no shutdown code runs
    live_server.restart()

    after = wait_pending(live_server, execution_id, "write")
    assert after["suggestion_id"] == write["suggestion_id"], "the same suggestion, not a new one"
    assert after["params"] == write["params"] == {"path": "out/bob.txt", "content": "hi by hand"}
    assert after["version"] == write["version"] and after["created_at"] == write["created_at"]
    assert stats(live_server, execution_id) == before_stats
    assert read(live_server, execution_id)["status"] == "waiting_decision"

    client = coach_client()
    ack = client.join(execution_id)
    assert ack["pending"] == 1 and ack["execution"]["status"] == "waiting_decision", ack
    pushed = client.wait("coaching_suggestion", what="on join after the restart")
    assert pushed["suggestion_id"] == write["suggestion_id"] and pushed["status"] == "pending", pushed
    joined_stats = client.wait("coaching_stats", what="on join after the restart")
    assert {k: joined_stats[k] for k in before_stats} == before_stats

    ack = client.decide(execution_id, write["suggestion_id"], "accept")
    assert ack["ok"] is True, ack
    last = client.wait("coaching_suggestion", is_step("last"), what="after the restart")
    assert client.decide(execution_id, last["suggestion_id"], "accept")["ok"] is True
    client.wait("execution_update", lambda u: u["status"] == "completed", what="after the restart")

    assert read(live_server, execution_id)["status"] == "completed"
    assert stats(live_server, execution_id) == expected_stats(
        suggestions_made=4, rejected=1, manual_executions=1, accepted=2
    )
    assert (live_server.workspace_data_dir() / "out" / "bob.txt").read_text(encoding="utf-8") == "hi by hand"
    metrics = live_server.get(f"/api/metrics/workflows/{wf['id']}").json()
    assert (metrics["decisions"], metrics["accepted"], metrics["rejected"], metrics["manual"]) == (4, 2, 1, 1), metrics


def test_a_decision_committed_just_before_a_crash_goes_on_after_the_restart(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    response = rest_decide(live_server, execution_id, greet["suggestion_id"], "accept")
    assert response.status_code == 200, response.text

    live_server.kill()  # maybe before the runner ran the step: the decision is committed, the rest must follow
    live_server.restart()

    write = wait_pending(live_server, execution_id, "write")
    assert write["params"] == {"path": "out/bob.txt", "content": "hi bob"}
    assert steps_of(live_server, execution_id)["greet"]["status"] == "succeeded"
    assert stats(live_server, execution_id) == expected_stats(suggestions_made=2, accepted=1)
    again = rest_decide(live_server, execution_id, greet["suggestion_id"], "accept")
    assert again.status_code == 409, again.text

    client = coach_client()
    client.join(execution_id)
    assert client.wait("coaching_suggestion")["suggestion_id"] == write["suggestion_id"]


def test_a_paused_session_stays_paused_across_a_crash_and_resumes(live_server, coach_client):
    wf = create_workflow(live_server)
    execution_id = start_coaching(live_server, wf["id"])
    greet = wait_pending(live_server, execution_id, "greet")
    assert live_server.post(f"/api/executions/{execution_id}/coaching/pause").status_code == 200

    live_server.kill()
    live_server.restart()

    pending = live_server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()
    assert pending["paused"] is True and pending["status"] == "paused", pending
    assert pending["suggestion"]["suggestion_id"] == greet["suggestion_id"], pending
    client = coach_client()
    assert client.join(execution_id)["execution"]["status"] == "paused"
    assert client.wait("coaching_suggestion")["suggestion_id"] == greet["suggestion_id"]
    assert client.decide(execution_id, greet["suggestion_id"], "accept")["error"]["code"] == "conflict"

    mark = client.count("coaching_suggestion")
    assert live_server.post(f"/api/executions/{execution_id}/coaching/resume").status_code == 200
    assert client.wait("coaching_suggestion", since=mark)["suggestion_id"] == greet["suggestion_id"]
    assert client.decide(execution_id, greet["suggestion_id"], "accept")["ok"] is True
    client.wait("coaching_suggestion", is_step("write"))
    wait_status(live_server, execution_id, ("waiting_decision",))
