"""/api/approvals through the Flask test client: approval steps, policy-forced tool-call reviews, every 4xx,
deadlines, cancel (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.approvals import service as approvals
from services.executions import service as executions
from services.orchestration import control
from services.orm import utcnow
from tests.conftest import Api, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

TOTAL = {"id": "total", "tool": "echo", "params": {"sum": 42}}
AFTER = {"id": "after", "tool": "echo", "params": {"paid": "{{ steps.total.output.sum }}"}}


def sign_off(**kw) -> dict:
    return {"id": "sign_off", "type": "approval", "message": "Pay {{ steps.total.output.sum }}?", **kw}


def as_user(app, services, email: str, role: str, workspace: str = "default") -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, email, role, workspace)}"
    return Api(client, services)


@pytest.fixture
def lead(app, services) -> Api:
    return as_user(app, services, "lead@test.local", "lead")


@pytest.fixture
def lead2(app, services) -> Api:
    return as_user(app, services, "lead2@test.local", "lead")


@pytest.fixture
def operator(app, services) -> Api:
    return as_user(app, services, "operator@test.local", "operator")


def waiting(api: Api, **approval) -> tuple[dict, dict]:
    """An execution (started by the admin) waiting at its approval step: (execution, approval)."""
    wf = api.workflow([TOTAL, sign_off(**approval), AFTER])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    steps = {s["step_id"]: s for s in ex["steps"]}
    approval_id = steps["sign_off"]["approval"]["approval_id"]
    return ex, api.ok("GET", f"/api/approvals/{approval_id}")


def decide(api: Api, approval_id: str, decision: str = "approve", status: int = 200, **body):
    code, answer = api.call("POST", f"/api/approvals/{approval_id}", {"decision": decision, **body})
    assert code == status, (code, answer)
    return answer


def steps_of(ex: dict) -> dict:
    return {s["step_id"]: s for s in ex["steps"]}


# --- approval steps ----------------------------------------------------------------------------------------


def test_an_approval_step_waits_with_its_rendered_message_and_approving_goes_on(api, lead):
    ex, approval = waiting(api)
    assert approval["message"] == "Pay 42?" and approval["kind"] == "step" and approval["status"] == "pending"
    assert approval["approvers"] == {"roles": ["lead"], "users": []} and approval["quorum"] == 1
    assert approval["deadline"] is None and approval["on_timeout"] == "reject"
    assert steps_of(ex)["sign_off"]["status"] == "waiting" and steps_of(ex)["after"]["status"] == "pending"
    assert ex["gate"]["approval_id"] == approval["approval_id"]
    answer = decide(lead, approval["approval_id"], comment="ok")
    assert answer["approval"]["status"] == "approved"
    assert answer["approval"]["decisions"][0]["user"] == "lead@test.local"
    done = api.settle(ex["execution_id"])
    assert done["status"] == "completed", done
    step = steps_of(done)["sign_off"]
    assert step["status"] == "succeeded" and step["output"]["approved"] is True
    assert step["output"]["decisions"][0]["comment"] == "ok"
    assert step["approval"] == {"approval_id": approval["approval_id"], "status": "approved", "kind": "step"}
    assert steps_of(done)["after"]["output"] == {"paid": 42}


def test_one_reject_fails_the_execution_and_nothing_after_runs(api, lead):
    ex, approval = waiting(api, quorum=2)
    decide(lead, approval["approval_id"], "reject", comment="too much")
    done = api.settle(ex["execution_id"])
    assert done["status"] == "failed"
    assert done["error"]["message"] == "rejected by lead@test.local: too much"
    assert steps_of(done)["sign_off"]["status"] == "rejected"
    assert steps_of(done)["after"]["status"] == "pending" and steps_of(done)["after"]["output"] is None


def test_quorum_two_needs_two_distinct_people_and_the_same_one_twice_is_409(api, lead, lead2):
    ex, approval = waiting(api, quorum=2)
    first = decide(lead, approval["approval_id"])
    assert first["approval"]["status"] == "pending" and first["approval"]["approvals"] == 1
    again = decide(lead, approval["approval_id"], status=409)
    assert "already decided by you" in again["error"]["message"]
    assert api.settle(ex["execution_id"])["status"] == "waiting_approval"
    assert decide(lead2, approval["approval_id"])["approval"]["status"] == "approved"
    assert api.settle(ex["execution_id"])["status"] == "completed"


def test_an_operator_is_not_eligible_for_a_lead_approval(api, operator):
    ex, approval = waiting(api)
    answer = decide(operator, approval["approval_id"], status=403)
    assert answer["error"]["code"] == "forbidden" and "lead" in answer["error"]["message"]
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["decisions"] == []


def test_named_users_may_decide_whatever_their_role(api, operator):
    ex, approval = waiting(api, approvers={"users": ["operator@test.local"]})
    assert decide(operator, approval["approval_id"])["approval"]["status"] == "approved"


def test_separate_duties_refuses_whoever_started_the_execution(api, lead):
    ex, approval = waiting(api, separate_duties=True)  # started by the admin
    answer = decide(api, approval["approval_id"], status=403)
    assert "separation of duties" in answer["error"]["message"]
    assert decide(lead, approval["approval_id"])["approval"]["status"] == "approved"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"decision": "maybe"}, "decision"),
        ({}, "decision"),
        ({"decision": "approve", "comment": 5}, "comment"),
        ({"decision": "edit", "params": {"x": 1}}, "decision"),
        ({"decision": "approve", "params": "x"}, "params"),
    ],
)
def test_a_bad_decision_is_422_naming_the_field(api, lead, body, field):
    ex, approval = waiting(api)
    code, answer = lead.call("POST", f"/api/approvals/{approval['approval_id']}", body)
    assert code == 422 and field in answer["error"]["details"], answer
    assert lead.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"


def test_a_decision_on_a_decided_approval_is_409_and_changes_nothing(api, lead, lead2):
    ex, approval = waiting(api)
    decide(lead, approval["approval_id"], "reject", comment="no")
    answer = decide(lead2, approval["approval_id"], status=409)
    assert answer["error"]["details"] == {"status": "rejected"}
    after = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert after["status"] == "rejected" and len(after["decisions"]) == 1


def test_cancelling_the_execution_expires_its_approval_and_the_queue_drops_it(api, lead):
    """Airflow #55053: a cancelled run must not leave its approval in anyone's queue."""
    ex, approval = waiting(api)
    assert [a["approval_id"] for a in api.ok("GET", "/api/approvals?status=pending")["items"]] == [
        approval["approval_id"]
    ]
    api.ok("POST", f"/api/executions/{ex['execution_id']}/cancel")
    assert api.ok("GET", "/api/approvals?status=pending")["items"] == []
    expired = api.ok("GET", "/api/approvals?status=expired")["items"]
    assert [(a["approval_id"], a["status"]) for a in expired] == [(approval["approval_id"], "expired")]
    assert expired[0]["decisions"][-1]["decision"] == "expire"
    answer = decide(lead, approval["approval_id"], status=409)
    assert answer["error"]["details"] == {"status": "expired", "reason": "the execution was cancelled"}
    assert answer["error"]["message"] == "this approval is already expired: the execution was cancelled"
    assert api.ok("GET", f"/api/executions/{ex['execution_id']}")["status"] == "cancelled"
    actions = [e["action"] for e in api.ok("GET", f"/api/audit?execution_id={ex['execution_id']}")["items"]]
    assert "approval_expire" in actions and "cancel" in actions


def test_another_workspaces_approval_is_404(api, app, services):
    ex, approval = waiting(api)
    stranger = as_user(app, services, "admin@other.local", "admin", "other")
    for method, body in (("GET", None), ("POST", {"decision": "approve"})):
        code, answer = stranger.call(method, f"/api/approvals/{approval['approval_id']}", body)
        assert (code, answer["error"]["code"]) == (404, "not_found")
    assert stranger.ok("GET", "/api/approvals")["items"] == []
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"
    code, _ = api.call("GET", "/api/approvals/nope")
    assert code == 404


def test_an_idempotency_key_replays_the_first_answer(api, lead):
    ex, approval = waiting(api)
    url = f"/api/approvals/{approval['approval_id']}"
    first = lead.ok("POST", url, {"decision": "approve"}, headers={"Idempotency-Key": "k-1"})
    again = lead.ok("POST", url, {"decision": "approve"}, headers={"Idempotency-Key": "k-1"})
    assert again == first
    code, answer = lead.call("POST", url, {"decision": "approve"}, headers={"Idempotency-Key": "k-2"})
    assert code == 409
    assert len(api.ok("GET", url)["decisions"]) == 1


def test_the_list_filters_by_status_and_pages(api, lead):
    made = [waiting(api)[1]["approval_id"] for _ in range(4)]
    decide(lead, made[0])
    decide(lead, made[1], "reject")
    total = lambda q: api.ok("GET", f"/api/approvals?{q}")["total"]  # noqa: E731
    assert (
        total("status=pending"),
        total("status=decided"),
        total("status=approved"),
        total("status=rejected"),
        total("status=expired"),
        total(""),
    ) == (2, 2, 1, 1, 0, 4)
    page = api.ok("GET", "/api/approvals?per_page=3&page=2")
    assert (page["total"], page["page"], page["per_page"], len(page["items"])) == (4, 2, 3, 1)
    assert page["items"][0]["approval_id"] == made[0]  # newest first
    code, answer = api.call("GET", "/api/approvals?status=waiting")
    assert code == 422 and "status" in answer["error"]["details"]


def test_a_bad_approval_step_is_refused_with_422_naming_the_field(api):
    code, answer = api.call(
        "POST", "/api/workflows", {"name": "bad", "steps": [sign_off(quorum=0, on_timeout="later", timeout_s=-1)]}
    )
    assert code == 422
    assert {"steps[0].quorum", "steps[0].on_timeout", "steps[0].timeout_s"} <= set(answer["error"]["details"])


# --- deadlines ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("on_timeout", "approval_status", "execution_status", "step_status"),
    [
        ("approve", "approved", "completed", "succeeded"),
        ("reject", "rejected", "failed", "rejected"),
        ("fail", "expired", "failed", "failed"),
    ],
)
def test_a_due_deadline_fires_once_as_on_timeout_says(
    api, services, on_timeout, approval_status, execution_status, step_status
):
    ex, approval = waiting(api, timeout_s=60, on_timeout=on_timeout)
    assert approval["deadline"] is not None
    assert services.runner.scans.fire_due() == 0  # not due yet
    later = utcnow() + timedelta(seconds=61)
    assert services.runner.scans.fire_due(later) == 1
    assert services.runner.scans.fire_due(later) == 0  # once
    done = api.settle(ex["execution_id"])
    assert done["status"] == execution_status, done
    assert steps_of(done)["sign_off"]["status"] == step_status
    fired = api.ok("GET", f"/api/approvals/{approval['approval_id']}")
    assert fired["status"] == approval_status and fired["decisions"][-1]["user"] == "system"
    audit = api.ok("GET", f"/api/audit?execution_id={ex['execution_id']}&action=approval_timeout")["items"]
    assert len(audit) == 1 and audit[0]["actor"] == "system"


def test_the_scanner_fires_a_short_deadline_by_itself(api):
    ex, approval = waiting(api, timeout_s=0.2, on_timeout="approve")
    done = api.settle(ex["execution_id"])
    deadline = utcnow() + timedelta(seconds=10)
    while done["status"] == "waiting_approval" and utcnow() < deadline:
        done = api.settle(ex["execution_id"])
    assert done["status"] == "completed", done


# --- policy-forced reviews of tool calls --------------------------------------------------------------------

WRITE = {"id": "pay", "tool": "file.write", "params": {"path": "out/pay.txt", "content": "pay 10"}}


def tool_call_waiting(api: Api, services, **spec) -> tuple[str, str]:
    """An execution whose step `pay` (file.write) waits for a policy-forced review: (execution id, approval id),
    opened directly through the service, as the runner does when a policy says require_review."""
    from core.approvals import ApprovalSpec

    wf = api.workflow([{"id": "ask", "type": "human_input", "question": "go?"}, WRITE])
    ex_id = api.settle(api.start(wf["id"])["execution_id"])["execution_id"]
    ws = api.ok("GET", "/api/auth/me")["workspace_id"]
    with services.command() as uow:
        ex = executions.get(uow.session, ws, ex_id, for_update=True)
        control.answer(uow, services.definitions, ws, ex_id, "ask", "yes")
        executions.set_status(ex, "continue")
        verdict = {"effect": "require_review", "rule": {"id": "r1", "name": "writes", "reason": "writes are checked"}}
        approval = approvals.open_tool_call(
            uow,
            ex,
            "pay",
            "file.write",
            {"path": "out/pay.txt", "content": "pay 10"},
            verdict,
            spec=ApprovalSpec(**spec),
        )
        approval_id = approval.id
    return ex_id, approval_id


def test_an_approved_tool_call_runs_with_its_params(api, services, lead):
    ex_id, approval_id = tool_call_waiting(api, services)
    shown = api.ok("GET", f"/api/approvals/{approval_id}")
    assert (shown["kind"], shown["tool"], shown["params"]["content"]) == ("tool_call", "file.write", "pay 10")
    assert shown["policy"]["rule"]["reason"] == "writes are checked"
    assert "writes are checked" in shown["message"]
    decide(lead, approval_id)
    done = api.settle(ex_id)
    assert done["status"] == "completed", done
    assert (api.data_dir() / "out" / "pay.txt").read_text() == "pay 10"
    assert steps_of(done)["pay"]["decision"] == "approve"


def test_an_edited_tool_call_runs_with_the_edited_params(api, services, lead):
    ex_id, approval_id = tool_call_waiting(api, services)
    answer = decide(lead, approval_id, "edit", params={"path": "out/pay.txt", "content": "pay 5"}, comment="less")
    assert answer["approval"]["status"] == "approved" and answer["approval"]["params"]["content"] == "pay 5"
    done = api.settle(ex_id)
    assert done["status"] == "completed"
    assert (api.data_dir() / "out" / "pay.txt").read_text() == "pay 5"
    assert steps_of(done)["pay"]["decision"] == "edit" and steps_of(done)["pay"]["params"]["content"] == "pay 5"


def test_a_rejected_tool_call_never_runs(api, services, lead):
    ex_id, approval_id = tool_call_waiting(api, services)
    decide(lead, approval_id, "reject", comment="not today")
    done = api.settle(ex_id)
    assert done["status"] == "failed" and done["error"]["message"] == "rejected by lead@test.local: not today"
    assert steps_of(done)["pay"]["status"] == "rejected"
    assert not (api.data_dir() / "out" / "pay.txt").exists()


def test_edited_params_that_break_the_tools_schema_are_422_naming_them(api, services, lead):
    ex_id, approval_id = tool_call_waiting(api, services)
    answer = decide(lead, approval_id, "edit", status=422, params={"path": 5, "content": "x"})
    assert "params.path" in answer["error"]["details"], answer
    answer = decide(lead, approval_id, "edit", status=422)
    assert "params" in answer["error"]["details"]
    shown = api.ok("GET", f"/api/approvals/{approval_id}")
    assert shown["status"] == "pending" and shown["decisions"] == [] and shown["params"]["content"] == "pay 10"


def test_edited_params_are_evaluated_again_by_the_recheck_hook(api, services, lead):
    seen = []

    def recheck(session, approval, params):
        seen.append(params)
        if "rm" in params["content"]:
            return {"effect": "deny", "rule": {"reason": "no removals"}}
        return {"effect": "require_review", "rule": {"reason": "rechecked"}}

    services.approval_recheck = recheck
    ex_id, approval_id = tool_call_waiting(api, services)
    answer = decide(lead, approval_id, "edit", status=422, params={"path": "out/pay.txt", "content": "rm -rf"})
    assert "no removals" in answer["error"]["details"]["params"][0]
    ok = decide(lead, approval_id, "edit", params={"path": "out/pay.txt", "content": "pay 1"})
    assert ok["approval"]["policy"]["rule"]["reason"] == "rechecked"
    assert [p["content"] for p in seen] == ["rm -rf", "pay 1"]
    assert api.settle(ex_id)["status"] == "completed"
