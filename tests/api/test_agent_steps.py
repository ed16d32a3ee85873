"""Agent steps end to end through the API, against a scripted OpenAI-compatible server on loopback (real HTTP, the
real `openai` client): the loop, the policy on every call, the five decisions on reviewed calls, questions,
approvals, limits, the context budget and the provider's failures."""

from __future__ import annotations

import pytest

from tests.conftest import Api
from tests.support.live_server import free_port


@pytest.fixture
def settings(settings, llm):
    return settings.with_overrides(llm_base_url=llm.base_url, llm_model="scripted", llm_max_retries=2, llm_timeout_s=10)


def echo(**arguments):
    return {"name": "echo", "arguments": arguments}


def agent_step(goal: str, tools=("echo",), **more) -> dict:
    return {"id": "agent", "type": "agent", "goal": goal, "tools": list(tools), **more}


def start(api: Api, goal: str, mode: str = "normal", tools=("echo",), **more) -> tuple[str, str]:
    wf = api.workflow([agent_step(goal, tools, **more)])
    return wf["id"], api.start(wf["id"], mode=mode)["execution_id"]


def transcript(api: Api, execution_id: str) -> list[dict]:
    return api.ok("GET", f"/api/executions/{execution_id}/steps/agent/transcript")["messages"]


def calls(api: Api, execution_id: str) -> list[dict]:
    return [m for m in transcript(api, execution_id) if m["role"] == "tool"]


def pending(api: Api, execution_id: str) -> dict:
    ex = api.settle(execution_id)
    assert ex["status"] == "waiting_decision", ex
    return api.ok("GET", f"/api/executions/{execution_id}/coaching/suggestion")["suggestion"]


def decide(api: Api, execution_id: str, suggestion: dict, decision: str, **extra) -> dict:
    return api.ok(
        "POST",
        f"/api/executions/{execution_id}/coaching/decision",
        {"suggestion_id": suggestion["suggestion_id"], "decision": decision, **extra},
    )


# -- the loop -----------------------------------------------------------------------------------------------------


def test_a_multi_turn_chain_runs_the_calls_and_its_final_answer_is_the_output(api, llm):
    llm.script(
        "Greet",
        [
            {"content": "Echo first.", "tool_calls": [echo(message="a")]},
            {"tool_calls": [echo(message="b")]},
            {"content": "Greeted twice. STAGE_COMPLETE"},
        ],
    )
    wf = api.workflow([agent_step("Greet {{ vars.who }}")], variables={"who": {"default": "Ada"}})
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"answer": "Greeted twice."}
    assert [r["turn"] for r in llm.requests] == [1, 2, 3]
    first = llm.requests[0]["body"]
    assert first["model"] == "scripted" and first["messages"][1] == {"role": "user", "content": "Greet Ada"}
    assert first["tools"][0]["function"]["name"] == "echo"
    assert [c["content"] for c in calls(api, ex["execution_id"])] == ['{"message":"a"}', '{"message":"b"}']


def test_parallel_calls_in_one_turn_each_get_one_answer(api, llm):
    llm.script("Both", [{"tool_calls": [echo(i=1), echo(i=2), {"name": "noop", "arguments": {}}]}, {"content": "ok"}])
    _, ex_id = start(api, "Both at once", tools=("echo", "noop"))
    assert api.settle(ex_id)["status"] == "completed"
    second = llm.requests[1]["body"]["messages"]
    answered = [m["tool_call_id"] for m in second if m["role"] == "tool"]
    asked = [c["id"] for c in second[2]["tool_calls"]]
    assert answered == asked == ["call_1_1", "call_1_2", "call_1_3"]


def test_an_agent_step_takes_the_steps_before_it_and_feeds_the_ones_after(api, llm):
    llm.script("Total of", [{"content": '{"total": 42}'}])
    wf = api.workflow(
        [
            {"id": "fetch", "tool": "echo", "params": {"amounts": [40, 2]}},
            agent_step(
                "Total of {{ steps.fetch.output.amounts }}", output_schema={"type": "object", "required": ["total"]}
            ),
            {"id": "report", "tool": "echo", "params": {"total": "{{ steps.agent.output.total }}"}},
        ]
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "completed" and ex["steps"][2]["output"] == {"total": 42}
    assert llm.requests[0]["body"]["messages"][1]["content"] == "Total of [40, 2]"


def test_invalid_json_arguments_go_back_to_the_llm_which_retries(api, llm):
    llm.script(
        "Retry",
        [
            {"tool_calls": [{"name": "file_read", "arguments": '{"path": "a.txt",'}]},
            {"tool_calls": [{"name": "file_read", "arguments": {"path": "a.txt"}}]},
            {"content": "read it"},
        ],
    )
    (api.data_dir() / "a.txt").write_text("hello")
    _, ex_id = start(api, "Retry a read", tools=("file.read",))
    assert api.settle(ex_id)["status"] == "completed"
    first, second = calls(api, ex_id)
    assert first["error"] and first["decision"] == "invalid" and "not valid JSON" in first["content"]
    assert "path (string, required)" in first["content"]
    tool_message = llm.requests[1]["body"]["messages"][-1]
    assert tool_message["role"] == "tool" and "not valid JSON" in tool_message["content"]
    assert second["status"] == "done" and "hello" in second["content"]


def test_the_same_call_three_times_fails_the_step(api, llm):
    llm.script("Loop", [{"tool_calls": [echo(x=1)]}] * 5)
    _, ex_id = start(api, "Loop forever")
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and "same call 3 times" in ex["error"]["message"]
    assert len(llm.requests) == 3 and len([c for c in calls(api, ex_id) if c["status"] == "done"]) == 2


def test_running_out_of_iterations_fails_the_step_naming_the_limit(api, llm):
    llm.script("Many", [{"tool_calls": [echo(i=i)]} for i in range(10)])
    _, ex_id = start(api, "Many calls", max_tool_iterations=3)
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and "max_tool_iterations (3)" in ex["error"]["message"]
    assert len(llm.requests) == 4


def test_the_context_budget_shortens_the_oldest_results_first_with_a_marker(api, llm):
    for i in range(4):
        (api.data_dir() / f"big{i}.txt").write_text(f"file {i} " + "x" * 3000)
    llm.script(
        "Big",
        [{"tool_calls": [{"name": "file_read", "arguments": {"path": f"big{i}.txt"}}]} for i in range(4)]
        + [{"content": "done"}],
    )
    _, ex_id = start(api, "Big results", tools=("file.read",), context_budget_kb=8)
    assert api.settle(ex_id)["status"] == "completed"
    last = llm.requests[-1]["body"]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert "trimmed by Coach to fit the context budget" in results[0]
    assert "trimmed" not in results[-1]
    marked = [c["trimmed"] for c in calls(api, ex_id)]
    assert marked[0] and not marked[-1]
    # the budget holds for the body the server received, the tool definitions and the model included (#32)
    assert all(r["size"] <= 8 * 1024 for r in llm.requests), [r["size"] for r in llm.requests]


def test_an_output_schema_is_checked_and_a_wrong_answer_asked_again(api, llm):
    llm.script("Schema", [{"content": "about 42"}, {"content": '{"total": 42}'}])
    _, ex_id = start(
        api,
        "Schema please",
        output_schema={"type": "object", "required": ["total"], "properties": {"total": {"type": "integer"}}},
    )
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"total": 42}
    assert "does not fit the required output schema" in llm.requests[1]["body"]["messages"][-1]["content"]


# -- the policy -----------------------------------------------------------------------------------------------


def test_a_denied_call_returns_the_rule_to_the_llm_and_never_runs(api, llm):
    api.ok(
        "POST",
        "/api/policies",
        {
            "name": "no writes by agents",
            "effect": "deny",
            "reason": "agents read only",
            "match": {"tool": "file.write", "agent_step": "*"},
        },
        status=201,
    )
    llm.script(
        "Write",
        [
            {"tool_calls": [{"name": "file_write", "arguments": {"path": "o.txt", "content": "x"}}]},
            {"content": "could not write"},
        ],
    )
    _, ex_id = start(api, "Write a file", tools=("file.*",))
    assert api.settle(ex_id)["status"] == "completed"
    (denied,) = calls(api, ex_id)
    assert denied["decision"] == "deny" and denied["error"] and denied["policy"]["effect"] == "deny"
    assert "no writes by agents" in denied["content"] and "agents read only" in denied["content"]
    assert not (api.data_dir() / "o.txt").exists()


def test_a_policy_review_in_a_normal_run_is_a_tool_call_suggestion(api, llm):
    api.ok(
        "POST",
        "/api/policies",
        {"name": "look at agent echoes", "effect": "require_review", "match": {"tool": "echo", "step_type": "agent"}},
        status=201,
    )
    llm.script("Review", [{"content": "I will echo.", "tool_calls": [echo(m=1)]}, {"content": "ok"}])
    _, ex_id = start(api, "Review me")
    sug = pending(api, ex_id)
    assert sug["kind"] == "tool_call" and sug["tool"] == "echo" and sug["params"] == {"m": 1}
    assert sug["rationale"] == "I will echo." and sug["policy"]["rule"]["name"] == "look at agent echoes"
    assert sug["tool_call_id"] == "call_1_1" and sug["step_id"] == "agent"
    decide(api, ex_id, sug, "accept")
    assert api.settle(ex_id)["status"] == "completed"
    assert calls(api, ex_id)[0]["decision"] == "accept"


# -- the five decisions on a reviewed call ------------------------------------------------------------------------

FIVE = [
    ("accept", {}, '{"v":"a"}'),
    ("correct", {"correction": {"v": "B"}}, '{"v":"B"}'),
    ("manual", {"manual_output": {"done": True}}, 'done by hand by the operator; the result: {"done": true}'),
    ("skip", {}, "skipped by the operator: the call was not run"),
    (
        "reject",
        {"feedback": "not this one"},
        "rejected by the operator: not this one. The call was not run. Do not repeat this call.",
    ),
]


@pytest.mark.parametrize("decision,extra,result", FIVE, ids=[d for d, _, _ in FIVE])
def test_each_decision_on_a_reviewed_call_gives_the_llm_one_result(api, llm, decision, extra, result):
    llm.script("Decide", [{"tool_calls": [echo(v="a")]}, {"content": "thanks"}])
    wf_id, ex_id = start(api, "Decide on it", mode="coaching")
    answer = decide(api, ex_id, pending(api, ex_id), decision, **extra)
    assert answer["ok"] and answer["decision"]["decision"] == decision
    ex = api.settle(ex_id)
    assert ex["status"] == "completed"
    (call,) = calls(api, ex_id)
    assert call["decision"] == decision and call["content"] == result
    tool_messages = [m for m in llm.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [result]
    stats = api.ok("GET", f"/api/executions/{ex_id}/coaching/stats")
    assert stats["suggestions_made"] == 1 and sum(v for k, v in stats.items() if k != "suggestions_made") == 1
    steps = api.ok("GET", f"/api/metrics/workflows/{wf_id}")["steps"]
    assert steps["agent"]["decisions"] == 1 and steps["agent:echo"]["decisions"] == 1


def test_a_second_decision_on_a_tool_call_is_409_and_a_correction_is_schema_checked(api, llm):
    llm.script("Twice", [{"tool_calls": [{"name": "file_read", "arguments": {"path": "a"}}]}, {"content": "ok"}])
    (api.data_dir() / "b").write_text("bee")
    _, ex_id = start(api, "Twice decided", mode="coaching", tools=("file.read",))
    sug = pending(api, ex_id)
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": {"path": 3}},
    )
    assert code == 422 and "correction.path" in body["error"]["details"]
    decide(api, ex_id, sug, "correct", correction={"path": "b"})
    code, _ = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert code == 409
    assert api.settle(ex_id)["status"] == "completed"
    assert "bee" in calls(api, ex_id)[0]["content"]


def test_a_correction_that_the_policy_denies_is_refused(api, llm):
    api.ok(
        "POST",
        "/api/policies",
        {"name": "no secrets", "effect": "deny", "match": {"tool": "echo", "params": "params.v == 'secret'"}},
        status=201,
    )
    llm.script("Deny edit", [{"tool_calls": [echo(v="a")]}, {"content": "ok"}])
    _, ex_id = start(api, "Deny edit", mode="coaching")
    sug = pending(api, ex_id)
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": {"v": "secret"}},
    )
    assert code == 409 and body["error"]["code"] == "policy_denied"
    decide(api, ex_id, sug, "accept")
    assert api.settle(ex_id)["status"] == "completed"


def test_calls_of_a_coaching_run_are_each_suggested_and_counted_per_tool(api, llm):
    llm.script("Count", [{"tool_calls": [echo(n=1), {"name": "noop", "arguments": {}}]}, {"content": "ok"}])
    wf_id, ex_id = start(api, "Count them", mode="coaching", tools=("echo", "noop"))
    first = pending(api, ex_id)
    decide(api, ex_id, first, "accept")
    second = pending(api, ex_id)
    assert (first["tool"], second["tool"]) == ("echo", "noop")
    decide(api, ex_id, second, "skip")
    assert api.settle(ex_id)["status"] == "completed"
    steps = api.ok("GET", f"/api/metrics/workflows/{wf_id}")["steps"]
    assert steps["agent"]["decisions"] == 2 and steps["agent:echo"]["accepted"] == 1
    assert steps["agent:noop"]["skipped"] == 1


def test_the_reviewers_of_an_agent_step_are_read_per_tool_as_its_evidence_is(api, llm):
    """GET /api/metrics/workflows/<id>/reviewers?step_id=<agent step>:<tool>: the decisions on that tool's calls
    only (issue #41 item 6); the agent step itself pools them."""
    llm.script("Review", [{"tool_calls": [echo(n=1), {"name": "noop", "arguments": {}}]}, {"content": "ok"}])
    wf_id, ex_id = start(api, "Review them", mode="coaching", tools=("echo", "noop", "file.read"))
    decide(api, ex_id, pending(api, ex_id), "accept")
    decide(api, ex_id, pending(api, ex_id), "reject", feedback="not now")
    api.settle(ex_id)
    reviewers = f"/api/metrics/workflows/{wf_id}/reviewers"
    whole = api.ok("GET", reviewers)
    assert whole["scopes"] == ["agent", "agent:echo", "agent:noop"]
    assert [(r["decisions"], r["accepts"]) for r in whole["items"]] == [(2, 1)]
    (echoed,) = api.ok("GET", f"{reviewers}?step_id=agent:echo")["items"]
    (nooped,) = api.ok("GET", f"{reviewers}?step_id=agent:noop")["items"]
    assert (echoed["decisions"], echoed["accepts"], nooped["decisions"], nooped["accepts"]) == (1, 1, 1, 0)
    # a tool the agent may call but whose calls nobody decided yet: no reviewers; one it may not call: 404
    assert api.ok("GET", f"{reviewers}?step_id=agent:file.read")["items"] == []
    code, body = api.call("GET", f"{reviewers}?step_id=agent:shell.run")
    assert code == 404 and "agent:echo" in body["error"]["details"]["steps"]


def test_corrections_of_one_tool_become_a_learned_rule_that_later_calls_apply_citing_the_pack(api, llm):
    llm.script("Learn", [{"tool_calls": [echo(currency="usd")]}, {"content": "ok"}])
    wf = api.workflow([agent_step("Learn the currency")])
    for _ in range(3):
        ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
        decide(api, ex_id, pending(api, ex_id), "correct", correction={"currency": "EUR"})
        assert api.settle(ex_id)["status"] == "completed"
    packs = api.ok("GET", f"/api/correction-packs?workflow_id={wf['id']}")
    items = packs["items"] if isinstance(packs, dict) else packs
    (pack,) = [p for p in items if p["step_id"] == "agent:echo"]
    ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
    sug = pending(api, ex_id)
    assert sug["params"] == {"currency": "EUR"} and sug["definition_params"] == {"currency": "usd"}
    assert sug["source"] == f"correction_pack:{pack['id']}"
    decide(api, ex_id, sug, "accept")
    assert api.settle(ex_id)["status"] == "completed"
    assert calls(api, ex_id)[0]["content"] == '{"currency":"EUR"}'


def test_one_tool_of_an_agent_step_can_be_promoted_on_its_own(api, llm):
    llm.script("Promote", [{"tool_calls": [echo(a=1), {"name": "noop", "arguments": {}}]}, {"content": "ok"}])
    wf_id, _ = start(api, "Promote one tool", mode="coaching", tools=("echo", "noop"))
    api.ok("POST", f"/api/workflows/{wf_id}/steps/agent:echo/mode", {"mode": "auto", "force": True, "reason": "tests"})
    ex_id = api.start(wf_id, mode="coaching")["execution_id"]
    sug = pending(api, ex_id)
    assert sug["tool"] == "noop"  # echo ran unattended (the spot check sample of this seed aside)
    code, _ = api.call("POST", f"/api/workflows/{wf_id}/steps/agent:shell.run/mode", {"mode": "auto"})
    assert code == 404


# -- people: questions and approvals ------------------------------------------------------------------------------


def test_confirm_data_waits_for_an_answer_which_goes_back_as_a_user_message(api, llm):
    llm.script("Confirm", [{"content": "CONFIRM_DATA: Is the total 42 EUR?"}, {"content": "Confirmed."}])
    _, ex_id = start(api, "Confirm the total")
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_clarification"
    state = api.ok("GET", f"/api/executions/{ex_id}/execution-state")
    assert state["question"] == "Is the total 42 EUR?" and state["step_id"] == "agent"
    api.ok("POST", f"/api/executions/{ex_id}/steps/agent/answer", {"answer": "Yes, 42 EUR."})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"answer": "Confirmed."}
    assert llm.requests[1]["body"]["messages"][-1] == {"role": "user", "content": "Yes, 42 EUR."}
    assert len(llm.requests) == 2


def test_confirm_data_can_be_answered_by_a_resume_with_feedback(api, llm):
    llm.script("Resume", [{"content": "CONFIRM_DATA: proceed?"}, {"content": "Going on."}])
    _, ex_id = start(api, "Resume with feedback")
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": "yes, proceed"})
    assert api.settle(ex_id)["status"] == "completed"
    assert llm.requests[1]["body"]["messages"][-1]["content"] == "yes, proceed"


def test_request_approval_waits_for_an_approval_and_goes_on_once_approved(api, llm):
    llm.script("Pay", [{"content": "REQUEST_APPROVAL: pay 42 EUR to ACME"}, {"content": "Paid."}])
    _, ex_id = start(api, "Pay the invoice")
    assert api.settle(ex_id)["status"] == "waiting_approval"
    (approval,) = api.ok("GET", "/api/approvals?status=pending")["items"]
    assert approval["execution_id"] == ex_id and approval["message"] == "pay 42 EUR to ACME"
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve", "comment": "fine"})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"answer": "Paid."}
    assert "Approved by admin@test.local: fine" in llm.requests[1]["body"]["messages"][-1]["content"]


def test_an_approval_held_for_the_undo_window_tells_the_agent_when_it_is_released(api, llm, services):
    # #42 item 4: with an undo window the decision is held at a gate of its own, and its release settled the step
    # as a plain approval step (completed, the LLM never told)
    from datetime import timedelta

    from services.orm import utcnow

    api.ok("PUT", "/api/workspace/undo", {"window_s": 30})
    llm.script("Ship", [{"content": "REQUEST_APPROVAL: ship order 7"}, {"content": "Shipped."}])
    _, ex_id = start(api, "Ship the order")
    assert api.settle(ex_id)["status"] == "waiting_approval"
    (approval,) = api.ok("GET", "/api/approvals?status=pending")["items"]
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve", "comment": "go ahead"})
    assert api.ok("GET", f"/api/executions/{ex_id}")["gate"]["kind"] == "held" and len(llm.requests) == 1
    assert services.runner.scans.fire_due(utcnow() + timedelta(seconds=31)) == 1  # the window ends
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"answer": "Shipped."}
    assert len(llm.requests) == 2
    assert "Approved by admin@test.local: go ahead" in llm.requests[1]["body"]["messages"][-1]["content"]


def test_a_rejected_request_for_approval_fails_the_step(api, llm):
    llm.script("Refuse", [{"content": "REQUEST_APPROVAL: delete everything"}])
    _, ex_id = start(api, "Refuse it")
    assert api.settle(ex_id)["status"] == "waiting_approval"
    (approval,) = api.ok("GET", "/api/approvals?status=pending")["items"]
    api.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "reject", "comment": "no"})
    ex = api.settle(ex_id)
    assert ex["status"] == "failed" and ex["steps"][0]["status"] == "rejected"


def test_cancelling_an_agent_waiting_on_a_call_supersedes_its_suggestion(api, llm):
    llm.script("Cancel", [{"tool_calls": [echo(a=1)]}])
    _, ex_id = start(api, "Cancel it", mode="coaching")
    sug = pending(api, ex_id)
    api.ok("POST", f"/api/executions/{ex_id}/cancel")
    code, _ = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert code == 409 and api.settle(ex_id)["status"] == "cancelled"


# -- the provider ---------------------------------------------------------------------------------------------


def test_a_429_is_retried_after_its_retry_after(api, llm):
    llm.script("Busy", [[{"status": 429, "headers": {"Retry-After": "1"}}, {"content": "finally"}]])
    _, ex_id = start(api, "Busy server")
    ex = api.settle(ex_id, timeout=20)
    assert ex["status"] == "completed" and ex["steps"][0]["output"] == {"answer": "finally"}
    first, second = llm.requests
    assert (first["status"], second["status"]) == (429, 200)
    assert second["at"] - first["at"] >= 0.9
    assert first["headers"]["idempotency-key"] == second["headers"]["idempotency-key"]
    assert llm.repeats() == []


def test_a_5xx_is_retried_and_a_server_that_keeps_failing_fails_the_step_with_its_message(api, llm):
    llm.script(
        "Broken",
        [[{"status": 503, "headers": {"Retry-After": "0"}, "body": {"error": {"message": "model is loading"}}}]],
    )
    _, ex_id = start(api, "Broken server")
    ex = api.settle(ex_id, timeout=30)
    assert ex["status"] == "failed" and "answered 503: model is loading" in ex["error"]["message"]
    assert len(llm.requests) == 3  # the first try and COACH_LLM_MAX_RETRIES=2 retries


def test_a_provider_that_is_down_fails_the_step_saying_so(app, api, services):
    services.runner.llm = None
    services.runner.settings = services.settings.with_overrides(
        llm_base_url=f"http://127.0.0.1:{free_port()}/v1", llm_max_retries=0
    )
    _, ex_id = start(api, "Nobody home")
    ex = api.settle(ex_id, timeout=20)
    assert ex["status"] == "failed" and "could not be reached" in ex["error"]["message"]


def test_without_a_provider_the_definition_is_accepted_and_the_step_fails_saying_what_to_set(api, services):
    services.runner.llm = None
    services.runner.settings = services.settings.with_overrides(llm_base_url="", llm_model="")
    _, ex_id = start(api, "No provider")
    ex = api.settle(ex_id)
    assert ex["status"] == "failed"
    assert "COACH_LLM_BASE_URL" in ex["error"]["message"] and "COACH_LLM_MODEL" in ex["error"]["message"]


def test_the_step_may_name_its_own_model(api, llm):
    llm.script("Model", [{"content": "ok"}])
    _, ex_id = start(api, "Model of its own", model="tiny-model")
    assert api.settle(ex_id)["status"] == "completed"
    assert llm.requests[0]["body"]["model"] == "tiny-model"
