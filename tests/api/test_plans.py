"""Ad-hoc plans: created -> approved -> executed (normal and coaching), list and status, who may approve, the
state table's 409s, 422s naming fields, per-tool metrics, save as workflow."""

from __future__ import annotations

import pytest

from tests.conftest import Api, authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

ECHO = [
    {"id": "step_1", "tool": "echo", "params": {"message": "hello {{ vars.who }}"}},
    {"id": "step_2", "tool": "echo", "params": {"message": "{{ steps.step_1.output.message }}!"}},
]
PLAN = {"name": "greet", "variables": {"who": {"type": "string", "default": "world"}}, "steps": ECHO}
# every call known before it runs: nothing reads an earlier step's output
KNOWN = {"variables": PLAN["variables"], "steps": [ECHO[0], {"id": "step_2", "tool": "echo", "params": {"n": 2}}]}


def plan(api: Api, body: dict | None = None, **extra) -> dict:
    return api.ok("POST", "/api/plans", {**(body or PLAN), **extra}, status=201)


def settle_plan(api: Api, plan_id: str) -> dict:
    api.settle(plan_id)
    return api.ok("GET", f"/api/plans/{plan_id}/status")


def test_plan_created_approved_executed_end_to_end(api):
    created = plan(api)
    assert created["status"] == "draft" and created["plan_id"] == created["execution_id"]
    assert [s["id"] for s in created["steps"]] == ["step_1", "step_2"]
    status = api.ok("GET", f"/api/plans/{created['plan_id']}/status")
    assert status["status"] == "draft" and status["started_at"] is None and status["duration_s"] is None
    approved = api.ok("POST", f"/api/plans/{created['plan_id']}/approve")
    assert approved["status"] == "approved" and approved["approved_by"] == "admin@test.local"
    started = api.ok("POST", f"/api/plans/{created['plan_id']}/execute", {})
    assert started["status"] in ("pending", "running", "completed")
    done = settle_plan(api, created["plan_id"])
    assert done["status"] == "completed" and done["progress"]["percent"] == 100.0
    assert done["duration_s"] is not None and done["finished_at"] and done["current_step"] is None
    ex = api.ok("GET", f"/api/executions/{created['plan_id']}")
    assert ex["steps"][1]["output"] == {"message": "hello world!"}
    actions = [e["action"] for e in api.ok("GET", f"/api/audit?execution_id={created['plan_id']}")["items"]]
    assert {"plan_create", "plan_approve", "plan_execute"} <= set(actions)


def test_plan_in_coaching_mode_counts_per_tool_and_operator_not_as_a_workflow(api):
    created = plan(api, mode="coaching")
    api.ok("POST", f"/api/plans/{created['plan_id']}/approve")
    api.ok("POST", f"/api/plans/{created['plan_id']}/execute", {"variables": {"who": "ada"}})
    for _ in range(2):
        ex = api.settle(created["plan_id"])
        assert ex["status"] == "waiting_decision" and ex["is_coaching"]
        sug = api.ok("GET", f"/api/executions/{created['plan_id']}/coaching/suggestion")["suggestion"]
        api.ok(
            "POST",
            f"/api/executions/{created['plan_id']}/coaching/decision",
            {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
        )
    assert api.settle(created["plan_id"])["status"] == "completed"
    tools = api.ok("GET", "/api/metrics/tools")["items"]
    assert [(t["tool"], t["decisions"], t["accepted"]) for t in tools] == [("echo", 2, 2)]
    operators = api.ok("GET", "/api/metrics/operators")["items"]
    assert [(o["operator"], o["decisions"]) for o in operators] == [("admin@test.local", 2)]
    assert api.ok("GET", "/api/metrics/global")["decisions"] == 2
    # the plan's hidden workflow is no workflow: not listed, not in the metrics list, not startable
    assert api.ok("GET", "/api/workflows")["items"] == []
    assert api.ok("GET", "/api/metrics/workflows")["items"] == []
    hidden = api.ok("GET", f"/api/executions/{created['plan_id']}")["workflow_id"]
    assert api.call("GET", f"/api/workflows/{hidden}")[0] == 404
    assert api.call("POST", "/api/executions/", {"workflow_id": hidden})[0] == 404


def test_executing_a_draft_is_409_and_approving_twice_is_409(api):
    created = plan(api)
    code, body = api.call("POST", f"/api/plans/{created['plan_id']}/execute", {})
    assert code == 409 and body["error"]["details"] == {"status": "draft", "action": "execute"}
    api.ok("POST", f"/api/plans/{created['plan_id']}/approve")
    code, body = api.call("POST", f"/api/plans/{created['plan_id']}/approve")
    assert code == 409 and body["error"]["details"]["status"] == "approved"
    api.ok("POST", f"/api/plans/{created['plan_id']}/execute", {})
    settle_plan(api, created["plan_id"])
    for action in ("approve", "execute"):
        code, body = api.call("POST", f"/api/plans/{created['plan_id']}/{action}", {})
        assert code == 409 and "already completed" in body["error"]["message"]


def test_a_cancelled_draft_cannot_be_approved(api):
    created = plan(api)
    api.ok("POST", f"/api/executions/{created['plan_id']}/cancel")
    assert api.call("POST", f"/api/plans/{created['plan_id']}/approve")[0] == 409


def test_a_draft_never_runs_not_even_after_a_restart(api, services):
    created = plan(api)
    services.runner.scans.recover()
    services.runner.wait_idle(5)
    assert api.ok("GET", f"/api/plans/{created['plan_id']}/status")["status"] == "draft"
    api.ok("POST", f"/api/plans/{created['plan_id']}/approve")
    services.runner.scans.recover()
    services.runner.wait_idle(5)
    assert api.ok("GET", f"/api/plans/{created['plan_id']}/status")["status"] == "approved"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"steps": []}, "steps"),
        ({"steps": [{"id": "a", "tool": "no.such"}]}, "steps[0].tool"),
        ({"steps": [{"id": "a", "tool": "echo", "depends_on": ["zz"]}]}, "steps[0].depends_on"),
        ({"steps": [{"id": "a", "type": "human_input"}]}, "steps[0].question"),
        ({"steps": ECHO, "mode": "auto"}, "mode"),
        ({"steps": ECHO, "variables": "x"}, "variables"),
        ({"name": 5, "steps": ECHO}, "name"),
    ],
)
def test_a_bad_plan_is_422_naming_the_field_like_a_workflow(api, body, field):
    code, answer = api.call("POST", "/api/plans", body)
    assert code == 422 and field in answer["error"]["details"], answer
    if field not in ("mode", "name"):  # the same validator, the same paths as a workflow's
        code, as_workflow = api.call("POST", "/api/workflows", {"name": "x", **body})
        assert code == 422 and as_workflow["error"]["details"] == answer["error"]["details"]


def test_missing_steps_and_bad_execute_bodies_are_422(api):
    code, body = api.call("POST", "/api/plans", {"name": "no steps"})
    assert code == 422 and "steps" in body["error"]["details"]
    created = plan(api)
    api.ok("POST", f"/api/plans/{created['plan_id']}/approve")
    code, body = api.call("POST", f"/api/plans/{created['plan_id']}/execute", {"variables": {"nobody": 1}})
    assert code == 422 and "variables.nobody" in body["error"]["details"]
    code, body = api.call("POST", f"/api/plans/{created['plan_id']}/execute", {"mode": "auto"})
    assert code == 422 and "mode" in body["error"]["details"]
    assert api.ok("GET", f"/api/plans/{created['plan_id']}")["status"] == "approved"  # nothing changed


def test_an_operator_approves_a_plan_the_policy_allows_and_not_one_it_does_not(app, api):
    operator = Api(authed_client(app, "operator"), api.services)
    allowed = plan(operator, KNOWN)
    assert allowed["created_by"] == "operator@test.local"
    assert operator.ok("POST", f"/api/plans/{allowed['plan_id']}/approve")["approver_role"] == "operator"
    api.ok(
        "POST",
        "/api/policies",
        {"name": "echo is reviewed", "effect": "require_review", "order": 1, "match": {"tool": "echo"}},
        status=201,
    )
    reviewed = plan(operator, KNOWN)
    code, body = operator.call("POST", f"/api/plans/{reviewed['plan_id']}/approve")
    assert code == 403 and body["error"]["details"]["needs"] == "lead"
    assert body["error"]["details"]["verdicts"] == {"step_1": "require_review", "step_2": "require_review"}
    lead = Api(authed_client(app, "lead"), api.services)
    assert lead.ok("POST", f"/api/plans/{reviewed['plan_id']}/approve")["approver_role"] == "lead"


def test_params_that_read_earlier_outputs_need_a_lead(app, api):
    operator = Api(authed_client(app, "operator"), api.services)
    created = plan(operator, {"steps": [ECHO[0], ECHO[1]], "variables": PLAN["variables"]})
    # step_2 reads step_1's output: unknown before the plan runs, so no operator may wave it through
    code, body = operator.call("POST", f"/api/plans/{created['plan_id']}/approve")
    assert code == 403 and body["error"]["details"]["verdicts"]["step_2"] is None


def test_list_and_filters(api):
    first, second = plan(api), plan(api, mode="coaching")
    api.ok("POST", f"/api/plans/{second['plan_id']}/approve")
    everything = api.ok("GET", "/api/plans")
    assert everything["total"] == 2 and [p["plan_id"] for p in everything["items"]] == [
        second["plan_id"],
        first["plan_id"],
    ]
    assert [p["plan_id"] for p in api.ok("GET", "/api/plans?status=draft")["items"]] == [first["plan_id"]]
    assert [p["plan_id"] for p in api.ok("GET", "/api/plans?mode=coaching")["items"]] == [second["plan_id"]]
    assert api.ok("GET", "/api/plans?created_by=nobody@x")["items"] == []
    assert api.call("GET", "/api/plans?status=sideways")[0] == 422
    assert api.call("GET", "/api/plans/nope")[0] == 404


def test_save_as_workflow_keeps_the_corrected_steps(api):
    created = plan(api)
    api.ok(
        "POST",
        f"/api/plans/{created['plan_id']}/apply-correction",
        {"step_id": "step_2", "correction": {"updated_step": {"params": {"message": "bye"}}}},
    )
    wf = api.ok("POST", f"/api/plans/{created['plan_id']}/save-as-workflow", {"name": "Greeter"}, status=201)
    assert wf["name"] == "Greeter" and wf["version"] == 1
    assert wf["steps"][1]["params"] == {"message": "bye"}
    assert [w["id"] for w in api.ok("GET", "/api/workflows")["items"]] == [wf["id"]]
    assert api.ok("GET", f"/api/plans/{created['plan_id']}")["saved_workflow_id"] == wf["id"]
    code, body = api.call("POST", f"/api/plans/{created['plan_id']}/save-as-workflow", {"name": ""})
    assert code == 422 and "name" in body["error"]["details"]
