"""GET /api/coaching/queue: an operator's work across executions, newest first, only their workspace."""

from __future__ import annotations

import pytest

from tests.conftest import Api, authed_client, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

STEPS = [
    {"id": "a", "name": "First", "tool": "echo", "params": {"message": "one"}},
    {"id": "b", "name": "Second", "tool": "echo", "params": {"message": "two"}},
]


def _start(api, wf_id: str) -> str:
    started = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)
    return api.settle(started["execution_id"])["execution_id"]


def test_queue_lists_pending_suggestions_newest_first_with_what_a_panel_needs(api):
    wf = api.workflow(STEPS, name="Queue demo")
    first, second = _start(api, wf["id"]), _start(api, wf["id"])
    page = api.ok("GET", "/api/coaching/queue")
    assert page["total"] == 2 and page["page"] == 1
    assert [i["execution_id"] for i in page["items"]] == [second, first]
    item = page["items"][0]
    assert item["workflow_name"] == "Queue demo" and item["step_name"] == "First" and item["tool"] == "echo"
    assert item["execution_status"] == "waiting_decision" and item["execution_mode"] == "coaching"
    assert item["params"] == {"message": "one"} and item["params_schema"]["type"] == "object"

    # deciding the older one moves it to its next step: its new suggestion is now the newest activity
    sug = api.ok("GET", f"/api/executions/{first}/coaching/suggestion")["suggestion"]
    api.ok(
        "POST",
        f"/api/executions/{first}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "accept"},
    )
    api.settle(first)
    page = api.ok("GET", "/api/coaching/queue")
    assert [(i["execution_id"], i["step_id"]) for i in page["items"]] == [(first, "b"), (second, "a")]
    assert sug["suggestion_id"] not in {i["suggestion_id"] for i in page["items"]}


def test_queue_pages_and_shows_paused_sessions_as_paused(api):
    wf = api.workflow(STEPS)
    ids = [_start(api, wf["id"]) for _ in range(3)]
    api.ok("POST", f"/api/executions/{ids[0]}/coaching/pause")
    page = api.ok("GET", "/api/coaching/queue?per_page=2&page=2")
    assert page["total"] == 3 and [i["execution_id"] for i in page["items"]] == [ids[0]]
    assert page["items"][0]["execution_status"] == "paused"
    code, body = api.call("GET", "/api/coaching/queue?per_page=0")
    assert code == 422 and "per_page" in str(body["error"]["details"]), body


def test_queue_holds_only_the_callers_workspace(app, api, services):
    wf = api.workflow(STEPS)
    _start(api, wf["id"])
    other = app.test_client()
    other.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'op@other.test', 'operator', 'other')}"
    code, body = Api(other, services).call("GET", "/api/coaching/queue")
    assert code == 200 and body["total"] == 0 and body["items"] == []
    code, body = Api(authed_client(app, "operator"), services).call("GET", "/api/coaching/queue")
    assert code == 200 and body["total"] == 1


def _start_with(api, wf_id: str, variables: dict) -> str:
    started = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": variables}, status=201)
    return api.settle(started["execution_id"])["execution_id"]


def test_queue_filters_by_workflow_step_kind_search_and_orders_oldest_first(api):
    invoices = api.workflow(STEPS, name="Invoices", variables={"customer": {"type": "string"}})
    refunds = api.workflow([{"id": "pay", "tool": "echo", "params": {"message": "x"}}], name="Refunds")
    acme = _start_with(api, invoices["id"], {"customer": "ACME Corp"})
    globex = _start_with(api, invoices["id"], {"customer": "Globex"})
    refund = _start_with(api, refunds["id"], {})

    def ids(query: str) -> list[str]:
        return [i["execution_id"] for i in api.ok("GET", f"/api/coaching/queue?{query}")["items"]]

    assert ids("") == [refund, globex, acme]
    assert ids("order=oldest") == [acme, globex, refund]
    assert ids(f"workflow_id={invoices['id']}") == [globex, acme]
    assert ids("step_id=pay") == [refund]
    assert ids("q=acme") == [acme]  # the run's variables
    assert ids("q=REFUND") == [refund]  # the workflow's name
    assert ids("q=100%25") == []  # % is a character, not a wildcard
    assert ids("kind=suggestion") == [refund, globex, acme]
    assert ids("kind=spot_check") == [] and ids("kind=human_input") == []
    assert ids("min_age_s=3600") == [] and ids("max_age_s=3600") == [refund, globex, acme]
    page = api.ok("GET", f"/api/coaching/queue?workflow_id={invoices['id']}&per_page=1")
    assert page["total"] == 2 and page["items"][0]["variables"] == {"customer": "Globex"}

    # a reject asks for a correction: a correction request, its own kind
    sug = api.ok("GET", f"/api/executions/{acme}/coaching/suggestion")["suggestion"]
    api.ok(
        "POST",
        f"/api/executions/{acme}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "reject", "feedback": "wrong"},
    )
    api.settle(acme)
    assert ids("kind=correction_request") == [acme]
    for bad in ("kind=nope", "order=up", "min_age_s=-1", "q=" + "x" * 201):
        code, body = api.call("GET", f"/api/coaching/queue?{bad}")
        assert code == 422 and bad.split("=")[0] in body["error"]["details"], (bad, body)


def test_questions_list_waiting_human_inputs_and_clarifications_until_answered(api):
    wf = api.workflow(
        [
            {"id": "ask", "type": "human_input", "question": "Which account?"},
            {
                "id": "go",
                "tool": "echo",
                "params": {"message": "{{ steps.ask.output }}"},
                "requires_clarification": True,
                "clarification_question": "Really go?",
            },
        ],
        name="Asks",
        variables={"who": {"type": "string", "default": "ann"}},
    )
    started = api.ok("POST", "/api/executions/", {"workflow_id": wf["id"], "mode": "normal"}, status=201)
    ex = api.settle(started["execution_id"])["execution_id"]
    page = api.ok("GET", "/api/coaching/questions")
    assert page["total"] == 1
    item = page["items"][0]
    assert item["execution_id"] == ex and item["kind"] == "human_input" and item["question"] == "Which account?"
    assert item["workflow_name"] == "Asks" and item["step_id"] == "ask" and item["variables"] == {"who": "ann"}
    assert api.ok("GET", "/api/coaching/questions?kind=clarification")["total"] == 0
    assert api.ok("GET", "/api/coaching/questions?kind=suggestion")["total"] == 0
    assert api.ok("GET", "/api/coaching/questions?q=ann")["total"] == 1
    assert api.ok("GET", "/api/coaching/questions?step_id=go")["total"] == 0

    api.ok("POST", f"/api/executions/{ex}/steps/ask/answer", {"answer": "ACC-1"})
    api.settle(ex)
    page = api.ok("GET", "/api/coaching/questions?kind=clarification")
    assert [(i["step_id"], i["question"]) for i in page["items"]] == [("go", "Really go?")]
    api.ok("POST", f"/api/executions/{ex}/resume", {"feedback": "yes"})
    api.settle(ex)
    assert api.ok("GET", "/api/coaching/questions")["total"] == 0
