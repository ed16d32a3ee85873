"""Interactive control of workflow executions and plans alike: pause for clarification, apply a correction to a
step that has not run, resume with feedback, read the execution state; every illegal transition is a 409 and
bad input a 422 naming the field."""

from __future__ import annotations

import pytest

from tests.conftest import Api

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

ASK_THEN_TWO = [
    {"id": "ask", "type": "human_input", "question": "Ready?"},
    {"id": "step_1", "tool": "echo", "params": {"message": "one"}},
    {"id": "step_2", "tool": "echo", "params": {"message": "told: {{ feedback.step_2 }}"}},
]


def holding(api: Api, steps=ASK_THEN_TWO, mode: str = "normal") -> str:
    """An execution of a workflow waiting at its first human_input step `ask`."""
    wf = api.workflow(steps)
    ex_id = api.start(wf["id"], mode=mode)["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    return ex_id


def state(api: Api, ex_id: str, base: str = "/api/executions") -> dict:
    return api.ok("GET", f"{base}/{ex_id}/execution-state")


def test_pause_before_a_later_step_then_resume_with_feedback_read_by_its_template(api):
    ex_id = holding(api)
    paused = api.ok("POST", f"/api/executions/{ex_id}/pause", {"step_id": "step_2", "question": "Proceed?"})
    assert paused["breakpoints"] == {"step_2": "Proceed?"}
    api.ok("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "yes"})
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_clarification"
    assert [s["status"] for s in ex["steps"]] == ["succeeded", "succeeded", "waiting"]
    now = state(api, ex_id)
    assert {k: now[k] for k in ("state", "step_id", "question", "feedback")} == {
        "state": "waiting_clarification",
        "step_id": "step_2",
        "question": "Proceed?",
        "feedback": None,
    }
    assert now["paused_at"]
    resumed = api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": "go ahead"})
    assert resumed["state"] in ("resumed", "running", "completed")
    ex = api.settle(ex_id)
    assert ex["status"] == "completed"
    assert ex["steps"][2]["output"] == {"message": "told: go ahead"}
    after = state(api, ex_id)
    assert after["state"] == "completed" and after["step_id"] == "step_2" and after["feedback"] == "go ahead"
    assert after["feedbacks"] == {"step_2": "go ahead"} and after["breakpoints"] == {}


def test_a_step_with_requires_clarification_stops_on_its_own(api):
    wf = api.workflow(
        [
            {
                "id": "check",
                "tool": "echo",
                "params": {"message": "x"},
                "requires_clarification": True,
                "clarification_question": "Is x right?",
            },
            {"id": "after", "tool": "echo", "params": {"message": "{{ feedback.check }}"}},
        ]
    )
    ex_id = api.start(wf["id"])["execution_id"]
    ex = api.settle(ex_id)
    assert ex["status"] == "waiting_clarification" and ex["steps"][0]["status"] == "waiting"
    assert state(api, ex_id)["question"] == "Is x right?"
    api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": "yes"})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][1]["output"] == {"message": "yes"}
    code, body = api.call("POST", f"/api/executions/{ex_id}/resume", {"feedback": "again"})
    assert code == 409 and "already completed" in body["error"]["message"]


def test_pause_at_once_on_the_current_coaching_step_and_resume_gives_the_suggestion_back(api):
    wf = api.workflow([{"id": "greet", "tool": "echo", "params": {"message": "hi"}}])
    ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_decision"
    sug = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    paused = api.ok("POST", f"/api/executions/{ex_id}/pause", {"step_id": "greet", "question": "Sure?"})
    assert (paused["state"], paused["step_id"], paused["question"]) == ("waiting_clarification", "greet", "Sure?")
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert code == 409 and body["error"]["details"]["status"] == "waiting_clarification"
    # the same pause again is a 409 of the table
    assert api.call("POST", f"/api/executions/{ex_id}/pause", {"step_id": "greet"})[0] == 409
    assert api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": None})["state"] == "waiting_decision"
    again = api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]
    assert again["suggestion_id"] == sug["suggestion_id"]
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    assert api.settle(ex_id)["status"] == "completed"


def test_correcting_a_paused_step_waits_for_the_resume_then_runs_the_corrected_step(api):
    ex_id = holding(api)
    api.ok("POST", f"/api/executions/{ex_id}/pause", {"step_id": "step_1", "question": "Right message?"})
    api.ok("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "yes"})
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    corrected = api.ok(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "step_1", "correction": {"updated_step": {"params": {"message": "uno"}, "description": "Spanish"}}},
    )
    assert corrected["state"] == "waiting_correction" and corrected["corrected_steps"] == ["step_1"]
    assert corrected["question"] == "Right message?"
    assert api.settle(ex_id)["status"] == "waiting_correction"  # nothing runs until it is resumed
    api.ok("POST", f"/api/executions/{ex_id}/resume", {"feedback": "fixed"})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][1]["output"] == {"message": "uno"}
    events = api.ok("GET", f"/api/audit?execution_id={ex_id}&action=step_correction")["items"]
    assert len(events) == 1 and events[0]["before"]["params"] == {"message": "one"}
    assert events[0]["after"]["params"] == {"message": "uno"}
    packs = api.ok("GET", f"/api/correction-packs?workflow_id={ex['workflow_id']}")["items"]
    assert [(p["step_id"], p["corrections"]) for p in packs] == [("step_1", 1)]
    # the workflow's own definition is untouched: the correction was this execution's
    assert api.ok("GET", f"/api/workflows/{ex['workflow_id']}")["steps"][1]["params"] == {"message": "one"}


def test_a_correction_of_a_step_not_reached_changes_no_state(api):
    ex_id = holding(api)
    body = api.ok(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "step_2", "correction": {"updated_step": {"tool": "noop", "params": {}}}},
    )
    assert body["state"] == "waiting_clarification"  # still waiting at `ask`
    api.ok("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "yes"})
    ex = api.settle(ex_id)
    assert ex["status"] == "completed" and ex["steps"][2]["tool"] == "noop"


@pytest.mark.parametrize(
    ("correction", "field"),
    [
        ({"updated_step": {"id": "renamed"}}, "correction.updated_step.id"),
        ({"updated_step": {"depends_on": []}}, "correction.updated_step.depends_on"),
        ({"updated_step": {"tool": "no.such"}}, "correction.updated_step.tool"),
        ({"updated_step": {"timeout_s": -1}}, "correction.updated_step.timeout_s"),
        ({"updated_step": {"retries": "many"}}, "correction.updated_step.retries"),
        ({"updated_step": {"params": "x"}}, "correction.updated_step.params"),
        ({"updated_step": {"params": {"message": "{{ broken"}}}, "correction.updated_step.params.message"),
        ({"updated_step": {"tool": "file.read", "params": {}}}, "correction.updated_step.params"),
        ({"updated_step": {}}, "correction.updated_step"),
        ({}, "correction.updated_step"),
    ],
)
def test_a_bad_correction_is_422_naming_the_field_and_changes_nothing(api, correction, field):
    ex_id = holding(api)
    code, body = api.call(
        "POST", f"/api/executions/{ex_id}/apply-correction", {"step_id": "step_1", "correction": correction}
    )
    assert code == 422 and field in body["error"]["details"], body
    assert state(api, ex_id)["corrected_steps"] == []


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("pause", {}, "step_id"),
        ("pause", {"step_id": "nope"}, "step_id"),
        ("pause", {"step_id": "step_1", "question": 5}, "question"),
        ("apply-correction", {"step_id": "nope", "correction": {"updated_step": {"retries": 1}}}, "step_id"),
        ("apply-correction", {"step_id": "step_1"}, "correction"),
        ("apply-correction", {"step_id": "step_1", "correction": "x"}, "correction"),
    ],
)
def test_bad_control_bodies_are_422(api, path, body, field):
    ex_id = holding(api)
    code, answer = api.call("POST", f"/api/executions/{ex_id}/{path}", body)
    assert code == 422 and field in answer["error"]["details"], answer


def test_illegal_transitions_are_409(api):
    ex_id = holding(api)
    # resuming a question that waits for an answer, not a clarification pause
    code, body = api.call("POST", f"/api/executions/{ex_id}/resume", {"feedback": "x"})
    assert code == 409 and body["error"]["details"]["gate"] == "human_input"
    # pausing the step that already asks a question: the table does not stop an execution twice
    assert api.call("POST", f"/api/executions/{ex_id}/pause", {"step_id": "ask"})[0] == 409
    # correcting a step that waits for a person for another reason
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "ask", "correction": {"updated_step": {"name": "x"}}},
    )
    assert code == 409 and "pause it first" in body["error"]["message"]
    api.ok("POST", f"/api/executions/{ex_id}/steps/ask/answer", {"answer": "yes"})
    assert api.settle(ex_id)["status"] == "completed"
    for path, body in (
        ("pause", {"step_id": "step_1"}),
        ("resume", {}),
        ("apply-correction", {"step_id": "step_2", "correction": {"updated_step": {"retries": 1}}}),
    ):
        code, answer = api.call("POST", f"/api/executions/{ex_id}/{path}", body)
        assert code == 409 and answer["error"]["details"]["status"] == "completed", (path, answer)


def test_a_step_that_already_ran_is_409(api):
    wf = api.workflow(ASK_THEN_TWO[1:] + [{"id": "ask", "type": "human_input", "question": "More?"}])
    ex_id = api.start(wf["id"])["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_clarification"
    code, body = api.call(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "step_1", "correction": {"updated_step": {"params": {"message": "late"}}}},
    )
    assert code == 409 and body["error"]["details"]["step_status"] == "succeeded"
    code, body = api.call("POST", f"/api/executions/{ex_id}/pause", {"step_id": "step_1"})
    assert code == 409 and body["error"]["details"]["step_status"] == "succeeded"


def test_resuming_a_running_execution_is_409(api):
    wf = api.workflow([{"id": "nap", "tool": "shell.run", "params": {"command": ["sleep", "0.5"]}}])
    api.allow("shell.run")
    ex_id = api.start(wf["id"])["execution_id"]
    code, body = api.call("POST", f"/api/executions/{ex_id}/resume", {})
    assert code == 409 and body["error"]["details"]["action"] == "resume"
    assert api.settle(ex_id)["status"] == "completed"


@pytest.mark.parametrize("base", ["/api/executions", "/api/plans"])
@pytest.mark.parametrize("question", ["", "   \n\t"])
def test_an_empty_clarification_question_is_422_and_pauses_nothing(api, base, question):
    if base == "/api/plans":
        run_id = api.ok("POST", "/api/plans", {"steps": ASK_THEN_TWO[1:]}, status=201)["plan_id"]
    else:
        run_id = holding(api)  # running: waits at its first question, step_2 still ahead
    before = state(api, run_id, base)
    code, answer = api.call("POST", f"{base}/{run_id}/pause", {"step_id": "step_2", "question": question})
    assert code == 422 and "question" in answer["error"]["details"], answer
    assert state(api, run_id, base) == before


def test_a_plan_paused_before_it_runs_is_corrected_and_resumed(api):
    plan = api.ok("POST", "/api/plans", {"steps": ASK_THEN_TWO[1:]}, status=201)
    plan_id = plan["plan_id"]
    api.ok("POST", f"/api/plans/{plan_id}/pause", {"step_id": "step_2", "question": "Proceed?"})
    api.ok("POST", f"/api/plans/{plan_id}/approve")
    # correcting an approved plan sends it back to draft: what was approved changed
    again = api.ok(
        "POST",
        f"/api/plans/{plan_id}/apply-correction",
        {"step_id": "step_1", "correction": {"updated_step": {"params": {"message": "first"}}}},
    )
    assert again["state"] == "draft"
    assert api.call("POST", f"/api/plans/{plan_id}/execute", {})[0] == 409
    api.ok("POST", f"/api/plans/{plan_id}/approve")
    api.ok("POST", f"/api/plans/{plan_id}/execute", {})
    api.settle(plan_id)
    now = state(api, plan_id, "/api/plans")
    assert (now["state"], now["step_id"], now["question"]) == ("waiting_clarification", "step_2", "Proceed?")
    assert api.ok("GET", f"/api/plans/{plan_id}/status")["current_step"] == "step_2"
    api.ok(
        "POST",
        f"/api/plans/{plan_id}/apply-correction",
        {"step_id": "step_2", "correction": {"updated_step": {"params": {"message": "{{ feedback.step_2 }}"}}}},
    )
    assert state(api, plan_id, "/api/plans")["state"] == "waiting_correction"
    api.ok("POST", f"/api/plans/{plan_id}/resume", {"feedback": "ok"})
    ex = api.settle(plan_id)
    assert ex["status"] == "completed"
    assert [s["output"] for s in ex["steps"]] == [{"message": "first"}, {"message": "ok"}]
    assert api.ok("GET", f"/api/plans/{plan_id}")["steps"][1]["params"] == {"message": "{{ feedback.step_2 }}"}


def test_plan_routes_take_plans_only_and_execution_routes_take_plans_too(api):
    ex_id = holding(api)
    assert api.call("POST", f"/api/plans/{ex_id}/pause", {"step_id": "step_1"})[0] == 404
    assert api.call("GET", f"/api/plans/{ex_id}/execution-state")[0] == 404
    plan = api.ok("POST", "/api/plans", {"steps": ASK_THEN_TWO[1:]}, status=201)
    assert state(api, plan["plan_id"])["state"] == "draft"
    assert api.call("GET", "/api/executions/nope/execution-state")[0] == 404


def test_coaching_session_pause_and_resume_still_work_beside_clarification(api):
    wf = api.workflow([{"id": "greet", "tool": "echo", "params": {"message": "hi"}}])
    ex_id = api.start(wf["id"], mode="coaching")["execution_id"]
    assert api.settle(ex_id)["status"] == "waiting_decision"
    api.ok("POST", f"/api/executions/{ex_id}/coaching/pause")
    code, body = api.call("POST", f"/api/executions/{ex_id}/resume", {})
    assert code == 409 and "coaching/resume" in body["error"]["message"]
    api.ok("POST", f"/api/executions/{ex_id}/coaching/resume")
    assert state(api, ex_id)["state"] == "waiting_decision"


def test_an_execution_shows_each_steps_correctable_definition_and_tool_schema(api):
    ex_id = holding(api)
    api.ok(
        "POST",
        f"/api/executions/{ex_id}/apply-correction",
        {"step_id": "step_1", "correction": {"updated_step": {"params": {"message": "uno"}, "retries": 2}}},
    )
    steps = {s["step_id"]: s for s in api.ok("GET", f"/api/executions/{ex_id}")["steps"]}
    assert steps["step_1"]["definition"] == {"tool": "echo", "params": {"message": "uno"}, "retries": 2} | {
        k: v for k, v in steps["step_1"]["definition"].items() if k in ("name", "timeout_s")
    }
    assert steps["step_1"]["params_schema"]["type"] == "object"
    assert steps["ask"]["params_schema"] is None and "tool" not in steps["ask"]["definition"]
