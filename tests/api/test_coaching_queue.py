"""GET /api/coaching/queue: an operator's work across executions, newest first, only their workspace."""
from __future__ import annotations

from tests.conftest import Api, authed_client, make_user

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
    api.ok("POST", f"/api/executions/{first}/coaching/decision",
           {"suggestion_id": sug["suggestion_id"], "decision": "accept"})
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
