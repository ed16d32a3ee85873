"""An agent step survives a SIGKILL of the server: the restarted server goes on from the stored conversation, never
asking the LLM again for a turn it stored, never running again a tool call that returned."""

from __future__ import annotations

from tests.support.live_server import LiveServer
from tests.support.llm_server import ScriptedLLM


def test_a_killed_server_resumes_the_agent_loop_without_repeating_a_turn_or_a_finished_call(tmp_path):
    with ScriptedLLM() as llm:
        tool = llm.base_url.rsplit("/v1", 1)[0] + "/tool"
        llm.script(
            "Kill me",
            [
                {
                    "content": "First the fast one.",
                    "tool_calls": [{"name": "http_request", "arguments": {"url": f"{tool}/fast"}}],
                },
                {"tool_calls": [{"name": "http_request", "arguments": {"url": f"{tool}/slow?delay=3"}}]},
                {"content": "Both calls returned. STAGE_COMPLETE"},
            ],
        )
        server = LiveServer(
            tmp_path / "server", env={"COACH_LLM_BASE_URL": llm.base_url, "COACH_LLM_MODEL": "scripted"}
        )
        with server:
            wf = server.post(
                "/api/workflows",
                json={
                    "name": "kill",
                    "steps": [
                        {"id": "agent", "type": "agent", "goal": "Kill me in the middle", "tools": ["http.request"]}
                    ],
                },
            )
            assert wf.status_code == 201, wf.text
            started = server.post("/api/executions/", json={"workflow_id": wf.json()["id"], "mode": "normal"})
            assert started.status_code == 201, started.text
            execution_id = started.json()["execution_id"]
            server.wait_for(lambda: llm.hits.get("/tool/slow"), timeout=20, message="the slow call")
            server.kill()
            assert [r["turn"] for r in llm.requests] == [1, 2]
            server.start()

            def finished():
                body = server.get(f"/api/executions/{execution_id}").json()
                return body if body["status"] in ("completed", "failed") else None

            final = server.wait_for(finished, timeout=30, message="the agent step to finish")
            transcript = server.get(f"/api/executions/{execution_id}/steps/agent/transcript").json()
        assert final["status"] == "completed", final
        assert final["steps"][0]["output"] == {"answer": "Both calls returned."}
        assert [r["turn"] for r in llm.requests] == [1, 2, 3] and llm.repeats() == []
        assert llm.hits["/tool/fast"] == 1  # it had returned before the kill: never run again
        assert llm.hits["/tool/slow"] == 2  # it had not: it runs again (the same call, at least once)
        calls = [m for m in transcript["messages"] if m["role"] == "tool"]
        assert [m["status"] for m in calls] == ["done", "done"]
        # the same idempotency key for a retry of a turn, a different one per turn
        keys = [r["headers"].get("idempotency-key") for r in llm.requests]
        assert len(set(keys)) == 3 and all(k and k.startswith(execution_id) for k in keys)


def test_an_agent_waiting_for_a_decision_survives_a_kill_and_goes_on_once_decided(tmp_path):
    with ScriptedLLM() as llm:
        llm.script(
            "Wait for me",
            [
                {"content": "Echo, please.", "tool_calls": [{"name": "echo", "arguments": {"n": 1}}]},
                {"content": "Thanks. STAGE_COMPLETE"},
            ],
        )
        server = LiveServer(
            tmp_path / "server", env={"COACH_LLM_BASE_URL": llm.base_url, "COACH_LLM_MODEL": "scripted"}
        )
        with server:
            wf = server.post(
                "/api/workflows",
                json={
                    "name": "wait",
                    "steps": [{"id": "agent", "type": "agent", "goal": "Wait for me", "tools": ["echo"]}],
                },
            ).json()
            execution_id = server.post("/api/executions/coaching", json={"workflow_id": wf["id"]}).json()[
                "execution_id"
            ]

            def pending():
                return server.get(f"/api/executions/{execution_id}/coaching/suggestion").json()["suggestion"]

            before = server.wait_for(pending, timeout=20, message="the tool call's suggestion")
            server.kill()
            server.start()
            after = server.wait_for(pending, timeout=20, message="the suggestion after the restart")
            assert after["suggestion_id"] == before["suggestion_id"] and after["kind"] == "tool_call"
            decided = server.post(
                f"/api/executions/{execution_id}/coaching/decision",
                json={"suggestion_id": after["suggestion_id"], "decision": "accept"},
            )
            assert decided.status_code == 200, decided.text
            final = server.wait_for(
                lambda: (
                    (b := server.get(f"/api/executions/{execution_id}").json())["status"] in ("completed", "failed")
                    and b
                ),
                timeout=30,
                message="the end",
            )
        assert final["status"] == "completed" and final["steps"][0]["output"] == {"answer": "Thanks."}
        assert [r["turn"] for r in llm.requests] == [1, 2]
