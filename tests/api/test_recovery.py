"""Recovery of a failed execution through the REST API (SQLite and PostgreSQL): retry the failed step with the same
or edited params (a new run with a new idempotency key, audited), resume from a step that has not run, re-run as a
new execution linked to the old one; every refusal a clear 4xx. And a run's history (GET .../history)."""

from __future__ import annotations

import pytest

from tests.conftest import Api, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

READ = {"id": "read", "tool": "file.read", "params": {"path": "input.txt"}}
AFTER = {"id": "after", "tool": "echo", "params": {"message": "read {{ steps.read.output.content }}"}}
LAST = {"id": "last", "tool": "echo", "params": {"message": "done"}}


def as_user(app, services, email: str, role: str, workspace: str = "default") -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, email, role, workspace)}"
    return Api(client, services)


@pytest.fixture
def operator(app, services) -> Api:
    return as_user(app, services, "operator@test.local", "operator")


def failed_run(api: Api, steps=(READ, AFTER), mode: str = "normal", **extra) -> dict:
    wf = api.workflow(list(steps), **extra)
    ex = api.settle(api.start(wf["id"], mode=mode)["execution_id"])
    assert ex["status"] == "failed", ex
    return ex


def steps_of(ex: dict) -> dict:
    return {s["step_id"]: s for s in ex["steps"]}


def audit_of(api: Api, ex_id: str, action: str) -> list[dict]:
    return [e for e in api.ok("GET", f"/api/audit?execution_id={ex_id}&per_page=200")["items"] if e["action"] == action]


def test_retry_with_the_same_params_is_a_new_run_with_a_new_key(api):
    ex = failed_run(api)
    read = steps_of(ex)["read"]
    assert read["status"] == "failed" and "input.txt" in read["error"] and read["run"] == 1
    first_key = read["idempotency_key"]
    assert ex["error"]["step_id"] == "read"
    (api.data_dir() / "input.txt").write_text("hello")
    answer = api.ok("POST", f"/api/executions/{ex['execution_id']}/retry", {"step_id": "read"})
    assert answer["status"] == "resumed" and answer["run"] == 2
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed" and done["error"] is None
    read = steps_of(done)["read"]
    assert read["run"] == 2 and read["idempotency_key"] != first_key and read["idempotency_key"].endswith(":read:2")
    assert steps_of(done)["after"]["output"] == {"message": "read hello"}
    (retry,) = audit_of(api, ex["execution_id"], "retry")
    assert retry["actor"] == "admin@test.local" and retry["result"] == "same"
    assert retry["before"]["idempotency_key"] == first_key and retry["after"]["next_run"] == 2
    keys = [
        e["after"]["idempotency_key"]
        for e in audit_of(api, ex["execution_id"], "tool_call")
        if e["after"]["step_id"] == "read"
    ]
    assert sorted(keys) == sorted([first_key, read["idempotency_key"]])


def test_retry_with_edited_params_runs_them_for_this_execution_only(api, operator):
    ex = failed_run(api)
    (api.data_dir() / "other.txt").write_text("other")
    operator.ok(
        "POST", f"/api/executions/{ex['execution_id']}/retry", {"step_id": "read", "params": {"path": "other.txt"}}
    )
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed"
    read = steps_of(done)["read"]
    assert read["params"] == {"path": "other.txt"} and read["definition"]["params"] == {"path": "other.txt"}
    (retry,) = audit_of(api, ex["execution_id"], "retry")
    assert retry["actor"] == "operator@test.local" and retry["result"] == "edited"
    assert retry["after"]["params"] == {"path": "other.txt"} and retry["after"]["params_before"] == {
        "path": "input.txt"
    }
    # the workflow itself is unchanged: a new run reads input.txt again
    again = api.settle(api.start(done["workflow_id"])["execution_id"])
    assert steps_of(again)["read"]["params"] == {"path": "input.txt"}


@pytest.mark.parametrize(
    "params, field",
    [
        ({"path": 5}, "params.path"),
        ({}, "params.path"),
        ({"path": "x", "max_bytes": "abc"}, "params.max_bytes"),
        ({"path": "x", "colour": "red"}, "params"),
        ({"path": "{{ vars.nope.deeper }}"}, "params.path"),
    ],
)
def test_edited_params_that_break_the_tools_schema_are_a_422_naming_the_field(api, params, field):
    ex = failed_run(api)
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/retry", {"step_id": "read", "params": params})
    assert code == 422, body
    assert field in body["error"]["details"], body
    assert api.ok("GET", f"/api/executions/{ex['execution_id']}")["status"] == "failed"  # nothing changed


def test_retry_refusals_are_clear(api, app, services):
    ex = failed_run(api, steps=(LAST, READ, AFTER))
    ex_id = ex["execution_id"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/retry", {"step_id": "last"})
    assert code == 409 and "did not fail (succeeded)" in body["error"]["message"]
    assert body["error"]["details"]["failed_steps"] == ["read"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/retry", {"step_id": "after"})
    assert code == 409 and "did not fail (pending)" in body["error"]["message"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/retry", {"step_id": "nope"})
    assert code == 422 and "step_id" in body["error"]["details"]
    assert api.call("POST", f"/api/executions/{ex_id}/retry", {})[0] == 422
    # an execution that is not failed
    fine = api.run([LAST])
    code, body = api.call("POST", f"/api/executions/{fine['execution_id']}/retry", {"step_id": "last"})
    assert code == 409 and "only a failed execution can be retried; this one is completed" in body["error"]["message"]
    code, body = api.call("POST", f"/api/executions/{fine['execution_id']}/resume-from", {"step_id": "last"})
    assert code == 409 and body["error"]["details"]["status"] == "completed"
    # another workspace's execution: not found
    stranger = as_user(app, services, "eve@elsewhere.test", "admin", "elsewhere")
    for path, body in (("retry", {"step_id": "read"}), ("resume-from", {"step_id": "after"}), ("rerun", {})):
        code, answer = stranger.call("POST", f"/api/executions/{ex_id}/{path}", body)
        assert code == 404, (path, answer)
    assert stranger.call("GET", f"/api/executions/{ex_id}/history")[0] == 404
    assert api.call("POST", "/api/executions/nope/retry", {"step_id": "read"})[0] == 404


def test_a_retry_that_fails_again_fails_the_execution_again_and_counts_its_runs(api):
    ex = failed_run(api)
    for run in (2, 3):
        api.ok("POST", f"/api/executions/{ex['execution_id']}/retry", {"step_id": "read"})
        again = api.settle(ex["execution_id"])
        assert again["status"] == "failed" and steps_of(again)["read"]["run"] == run
    history = api.ok("GET", f"/api/executions/{ex['execution_id']}/history")
    read = next(s for s in history["steps"] if s["step_id"] == "read")
    assert read["retries"] == 2 and read["run"] == 3
    runs = [e for e in read["events"] if e["kind"] == "run"]
    assert [e["run"] for e in runs] == [1, 2, 3] and len({e["idempotency_key"] for e in runs}) == 3


def test_resume_from_a_step_that_has_not_run_skips_the_failed_one(api, operator):
    ex = failed_run(api, steps=(READ, dict(LAST, depends_on=["read"]), AFTER))
    ex_id = ex["execution_id"]
    code, body = operator.call("POST", f"/api/executions/{ex_id}/resume-from", {"step_id": "read"})
    assert code == 409 and "retry it instead" in body["error"]["message"]
    # `after` reads read's output: there is none to give
    code, body = operator.call("POST", f"/api/executions/{ex_id}/resume-from", {"step_id": "after"})
    assert code == 409 and body["error"]["details"]["reads"] == ["read"]
    answer = operator.ok("POST", f"/api/executions/{ex_id}/resume-from", {"step_id": "last"})
    assert answer["skipped"] == ["read"]
    done = api.settle(ex_id)
    steps = steps_of(done)
    assert steps["read"]["status"] == "skipped" and "resumed the execution from step 'last'" in steps["read"]["error"]
    assert steps["last"]["status"] == "succeeded"
    # after reads the skipped step: the engine skips it too, and the execution completes
    assert steps["after"]["status"] == "skipped" and done["status"] == "completed"
    code, body = operator.call("POST", f"/api/executions/{ex_id}/resume-from", {"step_id": "last"})
    assert code == 409
    (resumed,) = audit_of(api, ex_id, "resume_from")
    assert resumed["actor"] == "operator@test.local" and resumed["after"]["skipped"] == ["read"]


def test_a_failed_execution_says_which_steps_resume_from_may_choose_and_why_not_the_others(api, operator):
    ex = failed_run(api, steps=(READ, dict(LAST, depends_on=["read"]), AFTER))
    # the failed step and the step that reads its output cannot be chosen, each with resume-from's own reason
    assert ex["resume_from"] == [
        {"step_id": "last", "allowed": True, "reason": None, "skips": ["read"]},
        {
            "step_id": "after",
            "allowed": False,
            "skips": [],
            "reason": "step 'after' reads the output of step 'read', which has no output to give: retry 'read' instead",
        },
    ]
    refused = operator.call("POST", f"/api/executions/{ex['execution_id']}/resume-from", {"step_id": "after"})
    assert refused[0] == 409 and refused[1]["error"]["message"] == ex["resume_from"][1]["reason"]
    operator.ok("POST", f"/api/executions/{ex['execution_id']}/resume-from", {"step_id": "last"})
    # once it goes on, there is nothing to resume from
    assert api.settle(ex["execution_id"])["resume_from"] == []


def test_resume_from_a_step_that_ran_is_a_409(api):
    ex = failed_run(api, steps=(LAST, READ, AFTER))
    code, body = api.call("POST", f"/api/executions/{ex['execution_id']}/resume-from", {"step_id": "last"})
    assert code == 409 and "already ran (succeeded)" in body["error"]["message"]
    assert body["error"]["details"]["not_run"] == ["after"]


def test_rerun_starts_a_new_execution_linked_to_the_old_one(api):
    wf = api.workflow(
        [
            {"id": "say", "tool": "echo", "params": {"message": "{{ vars.word }}"}},
            {"id": "read", "tool": "file.read", "params": {"path": "{{ vars.file }}"}},
        ],
        variables={"word": {"type": "string", "required": True}, "file": {"type": "string"}},
    )
    old = api.settle(api.start(wf["id"], {"word": "hi", "file": "missing.txt"})["execution_id"])
    assert old["status"] == "failed"
    (api.data_dir() / "there.txt").write_text("x")
    new = api.ok(
        "POST",
        f"/api/executions/{old['execution_id']}/rerun",
        {"variables": {"word": "yo", "file": "there.txt"}},
        status=201,
    )
    assert new["rerun_of"] == old["execution_id"] and new["execution_id"] != old["execution_id"]
    assert new["variables"] == {"word": "yo", "file": "there.txt"}
    done = api.settle(new["execution_id"])
    assert done["status"] == "completed" and steps_of(done)["say"]["output"] == {"message": "yo"}
    same = api.ok("POST", f"/api/executions/{old['execution_id']}/rerun", status=201)  # no body: same variables
    assert same["variables"] == {"word": "hi", "file": "missing.txt"}
    history = api.ok("GET", f"/api/executions/{old['execution_id']}/history")
    assert history["reruns"] == [new["execution_id"], same["execution_id"]]
    assert api.ok("GET", f"/api/executions/{new['execution_id']}/history")["rerun_of"] == old["execution_id"]
    assert [e["kind"] for e in history["events"]].count("rerun") == 2
    code, body = api.call("POST", f"/api/executions/{old['execution_id']}/rerun", {"variables": {"word": 5}})
    assert code == 422 and "variables.word" in body["error"]["details"]


def test_rerun_follows_the_roles_and_needs_an_execution_that_ended(api, operator):
    normal = failed_run(api)
    code, body = operator.call("POST", f"/api/executions/{normal['execution_id']}/rerun")
    assert code == 403 and "lead" in body["error"]["message"]
    wf = api.workflow([{"id": "ask", "type": "human_input", "question": "?"}])
    waiting = api.settle(api.start(wf["id"])["execution_id"])
    code, body = api.call("POST", f"/api/executions/{waiting['execution_id']}/rerun")
    assert code == 409 and "still waiting_clarification" in body["error"]["message"]
    api.ok("DELETE", f"/api/workflows/{normal['workflow_id']}", status=204)
    code, body = api.call("POST", f"/api/executions/{normal['execution_id']}/rerun")
    assert code == 409 and "workflow was deleted" in body["error"]["message"]


def test_an_operator_retries_and_reruns_a_coached_run(api, operator):
    wf = api.workflow([READ])
    ex_id = operator.start(wf["id"], mode="coaching")["execution_id"]
    assert operator.settle(ex_id)["status"] == "waiting_decision"
    sug = operator.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    operator.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert operator.settle(ex_id)["status"] == "failed"
    (api.data_dir() / "fixed.txt").write_text("ok")
    operator.ok("POST", f"/api/executions/{ex_id}/retry", {"step_id": "read", "params": {"path": "fixed.txt"}})
    # a retry does not skip the review the workflow is under: the corrected call is suggested again
    assert operator.settle(ex_id)["status"] == "waiting_decision"
    sug = operator.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert sug["params"] == {"path": "fixed.txt"}
    operator.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert operator.settle(ex_id)["status"] == "completed"
    rerun = operator.ok("POST", f"/api/executions/{ex_id}/rerun", status=201)
    assert rerun["mode"] == "coaching"


def test_the_history_holds_questions_answers_approvals_and_rejections_in_words(api):
    wf = api.workflow(
        [
            {"id": "total", "tool": "echo", "params": {"sum": 42}},
            {"id": "sign_off", "type": "approval", "message": "Pay 42?"},
            {"id": "send", "tool": "echo", "params": {"to": "{{ feedback.send }}"}},
        ]
    )
    ex_id = api.start(wf["id"])["execution_id"]
    api.ok("POST", f"/api/executions/{ex_id}/pause", {"step_id": "send", "question": "Which account?"})
    ex = api.settle(ex_id)
    approval_id = steps_of(ex)["sign_off"]["approval"]["approval_id"]
    api.ok("POST", f"/api/approvals/{approval_id}", {"decision": "approve", "comment": "within budget"})
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": "the blue one"})
    assert api.settle(ex_id)["status"] == "completed"
    history = api.ok("GET", f"/api/executions/{ex_id}/history")
    steps = {s["step_id"]: s for s in history["steps"]}
    texts = [e["text"] for e in steps["send"]["events"]]
    assert "Paused by admin@test.local before this step: “Which account?”" in texts
    assert "Resumed by admin@test.local with the answer: “the blue one”" in texts
    resumed = next(e for e in steps["send"]["events"] if e["kind"] == "resume")
    assert resumed["question"] == "Which account?" and resumed["answer"] == "the blue one"
    approved = next(e for e in steps["sign_off"]["events"] if e["kind"] == "approval")
    assert (approved["actor"], approved["comment"], approved["text"]) == (
        "admin@test.local",
        "within budget",
        "Approved by admin@test.local: “within budget”",
    )
    assert [e["kind"] for e in history["events"]] == ["start"]


def test_a_coaching_rejection_and_correction_show_in_words_to_an_operator(api, operator):
    wf = api.workflow([{"id": "greet", "tool": "echo", "params": {"message": "hi", "n": 1}, "on_reject": "stop"}])
    ex_id = operator.start(wf["id"], mode="coaching")["execution_id"]
    operator.settle(ex_id)
    sug = operator.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    operator.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "reject", "feedback": "wrong customer"},
    )
    assert operator.settle(ex_id)["status"] == "failed"
    history = operator.ok("GET", f"/api/executions/{ex_id}/history")
    greet = history["steps"][0]
    texts = [e["text"] for e in greet["events"]]
    assert "Rejected by operator@test.local: wrong customer" in texts, texts
    decision = next(e for e in greet["events"] if e["kind"] == "decision")
    assert decision["actor"] == "operator@test.local" and decision["decision"] == "reject"
    # the rejected step may be retried, with a correction this time
    operator.ok("POST", f"/api/executions/{ex_id}/retry", {"step_id": "greet", "params": {"message": "hello", "n": 2}})
    operator.settle(ex_id)
    sug = operator.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    operator.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": {"message": "hello!", "n": 2}},
    )
    assert operator.settle(ex_id)["status"] == "completed"
    greet = operator.ok("GET", f"/api/executions/{ex_id}/history")["steps"][0]
    corrected = [e for e in greet["events"] if e.get("decision") == "correct"][0]
    assert corrected["changes"] == [{"path": "message", "before": "hello", "after": "hello!", "change": "changed"}]
    retried = next(e for e in greet["events"] if e["kind"] == "retry")
    assert {c["path"] for c in retried["changes"]} == {"message", "n"} and greet["retries"] == 1


def test_the_answer_to_a_question_step_is_in_the_history_with_who_gave_it(api, operator):
    wf = api.workflow(
        [
            {"id": "ask", "type": "human_input", "question": "Which region?"},
            {"id": "report", "tool": "echo", "params": {"message": "{{ steps.ask.output.answer }}"}},
        ]
    )
    ex_id = api.start(wf["id"])["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    operator.ok("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "EMEA"})
    assert api.settle(ex_id)["status"] == "completed"
    ask = operator.ok("GET", f"/api/executions/{ex_id}/history")["steps"][0]
    (answered,) = [e for e in ask["events"] if e["kind"] == "answer"]
    assert answered["text"] == "Answered by operator@test.local: “EMEA”"
    assert (answered["question"], answered["answer"], answered["actor"]) == (
        "Which region?",
        "EMEA",
        "operator@test.local",
    )
    (audit,) = audit_of(api, ex_id, "answer")
    assert audit["before"] == {"question": "Which region?"} and audit["result"] == "human_input"


def test_a_failed_plan_is_retried_with_changed_params_but_not_re_run(api):
    created = api.ok("POST", "/api/plans", {"name": "read it", "steps": [READ, AFTER]}, status=201)
    plan_id = created["plan_id"]
    api.ok("POST", f"/api/plans/{plan_id}/approve")
    api.ok("POST", f"/api/plans/{plan_id}/execute", {})
    assert api.settle(plan_id)["status"] == "failed"
    (api.data_dir() / "plan.txt").write_text("planned")
    api.ok("POST", f"/api/executions/{plan_id}/retry", {"step_id": "read", "params": {"path": "plan.txt"}})
    assert api.settle(plan_id)["status"] == "completed"
    assert api.ok("GET", f"/api/plans/{plan_id}/status")["status"] == "completed"
    assert steps_of(api.ok("GET", f"/api/executions/{plan_id}"))["after"]["output"] == {"message": "read planned"}
    code, body = api.call("POST", f"/api/executions/{plan_id}/rerun")
    assert code == 409 and "a plan is not re-run" in body["error"]["message"]
