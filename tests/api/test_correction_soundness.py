"""Sound corrections (issue 31, item 1) through the API, on SQLite and PostgreSQL: a correction that drops a param
the step sets, changes its type or breaks the tool's schema is a 422 naming the field (REST and Socket.IO alike);
a correction whose step then fails is marked and counts towards no learned rule; a lead removes one change from a
pack, audited."""

from __future__ import annotations

import pytest

from tests.conftest import authed_client

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

TOTAL = {"id": "total", "tool": "echo", "params": {"rows": 2, "total": 12.5}}
SUMMARY = {
    "id": "summary",
    "tool": "echo",
    "depends_on": ["total"],
    "params": {"line": "{{ steps.total.output.rows }} rows, {{ steps.total.output.total }}"},
}


def _suggestion(api, ex_id: str) -> dict:
    api.settle(ex_id)
    return api.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion")["suggestion"]


def _start(api, wf_id: str) -> tuple[str, dict]:
    ex_id = api.ok("POST", "/api/executions/coaching", {"workflow_id": wf_id, "variables": {}}, status=201)[
        "execution_id"
    ]
    return ex_id, _suggestion(api, ex_id)


def _decision(ex_id: str, sug: dict, correction) -> tuple[str, dict]:
    return (
        f"/api/executions/{ex_id}/coaching/decision",
        {"suggestion_id": sug["suggestion_id"], "decision": "correct", "correction": correction},
    )


def test_dropping_a_param_the_step_sets_is_422_naming_it_and_changes_nothing(api):
    wf_id = api.workflow([TOTAL, SUMMARY])["id"]
    ex_id, sug = _start(api, wf_id)
    status, body = api.call("POST", *_decision(ex_id, sug, {"rows": 2}))
    assert status == 422, body
    assert body["error"]["code"] == "validation_failed"
    assert list(body["error"]["details"]) == ["correction.total"]
    assert "is required" in body["error"]["details"]["correction.total"][0]
    assert _suggestion(api, ex_id)["suggestion_id"] == sug["suggestion_id"]  # still waiting for a decision
    assert api.ok("GET", f"/api/correction-packs?workflow_id={wf_id}")["items"] == []


def test_a_number_turned_into_text_is_422_naming_the_field(api):
    wf_id = api.workflow([TOTAL])["id"]
    ex_id, sug = _start(api, wf_id)
    status, body = api.call("POST", *_decision(ex_id, sug, {"rows": 2, "total": "abc"}))
    assert status == 422, body
    assert body["error"]["details"] == {"correction.total": ["must stay a number, as suggested (got a string)"]}
    # a number that is another number is a correction like any other
    api.ok("POST", *_decision(ex_id, sug, {"rows": 2, "total": 13}))
    assert api.settle(ex_id)["status"] == "completed"


def test_a_required_param_of_the_tools_schema_is_named(api):
    wf_id = api.workflow([{"id": "read", "tool": "file.read", "params": {"path": "in.csv"}}])["id"]
    ex_id, sug = _start(api, wf_id)
    status, body = api.call("POST", *_decision(ex_id, sug, {}))
    assert status == 422 and body["error"]["details"] == {"correction.path": ["is required"]}, body


def test_the_socket_refuses_the_same_correction_naming_the_field(app, api, admin_token):
    wf_id = api.workflow([TOTAL, SUMMARY])["id"]
    ex_id, sug = _start(api, wf_id)
    socket = app.extensions["socketio"].test_client(app, auth={"token": admin_token})
    assert socket.emit("join_execution", {"execution_id": ex_id}, callback=True)["ok"] is True
    ack = socket.emit(
        "coaching_decision",
        {
            "execution_id": ex_id,
            "suggestion_id": sug["suggestion_id"],
            "decision": "correct",
            "correction": {"rows": 2},
        },
        callback=True,
    )
    assert ack["ok"] is False
    assert ack["error"]["code"] == "validation_failed"
    assert list(ack["error"]["details"]) == ["correction.total"]
    socket.disconnect()


def test_a_correction_whose_step_fails_is_marked_and_counts_towards_no_rule(api, services):
    (api.data_dir() / "in.csv").write_text("id\n1\n")
    wf_id = api.workflow([{"id": "read", "tool": "file.read", "params": {"path": "in.csv"}}])["id"]
    for _ in range(2):  # two sound corrections, then one whose step fails
        ex_id, sug = _start(api, wf_id)
        api.ok("POST", *_decision(ex_id, sug, {"path": "in.csv", "max_bytes": 100}))
        assert api.settle(ex_id)["status"] == "completed"
    ex_id, sug = _start(api, wf_id)
    api.ok("POST", *_decision(ex_id, sug, {"path": "missing.csv"}))
    assert api.settle(ex_id)["status"] == "failed"

    pack = api.ok("GET", f"/api/correction-packs?workflow_id={wf_id}")["items"][0]
    assert pack["corrections"] == 2 and pack["discounted"] == 1
    assert [c["field"] for c in pack["changes"]] == ["max_bytes"]  # path → missing.csv is not counted
    from services.models.coaching import Decision

    with services.db.read() as session:
        assert session.get(Decision, sug["suggestion_id"]).outcome == "step_failed"
    events = api.ok("GET", "/api/audit?action=correction_failed")["items"]
    assert len(events) == 1 and events[0]["target_id"] == sug["suggestion_id"]
    assert events[0]["after"]["discounted"] is True and events[0]["after"]["failed_step_id"] == "read"


def test_a_lead_removes_one_change_from_a_pack_audited(app, api):
    wf_id = api.workflow([{"id": "mail", "tool": "echo", "params": {"to": "a@x", "cc": "none"}}])["id"]
    for correction in ({"to": "b@x", "cc": "none"}, {"to": "b@x", "cc": "none"}, {"to": "b@x", "cc": "boss"}):
        ex_id, sug = _start(api, wf_id)
        api.ok("POST", *_decision(ex_id, sug, correction))
        api.settle(ex_id)
    pack = api.ok("GET", f"/api/correction-packs?workflow_id={wf_id}")["items"][0]
    assert [r["field"] for r in pack["rules"]] == ["to"]
    wrong = {"field": "to", "before": "a@x", "after": "b@x"}

    operator = authed_client(app, "operator")
    assert operator.post(f"/api/correction-packs/{pack['id']}/remove-change", json=wrong).status_code == 403

    after = api.ok("POST", f"/api/correction-packs/{pack['id']}/remove-change", wrong)
    assert after["corrections"] == 3 and after["rules"] == []
    assert [(c["field"], c["after"]) for c in after["changes"]] == [("cc", "boss")]
    event = api.ok("GET", "/api/audit?action=pack_change_remove")["items"][0]
    assert event["target_id"] == pack["id"]
    assert event["before"]["change"] == {**wrong, "count": 3}

    status, body = api.call("POST", f"/api/correction-packs/{pack['id']}/remove-change", wrong)
    assert status == 404, body
    status, body = api.call("POST", f"/api/correction-packs/{pack['id']}/remove-change", {"field": "to"})
    assert status == 422, body


def test_dropping_a_nested_field_the_step_writes_into_a_free_form_param_is_422_naming_it(api):
    step = {
        "id": "summary",
        "tool": "file.write",
        "params": {"path": "summary.json", "json": {"rows": 2, "total": 12.5}},
    }
    wf_id = api.workflow([step])["id"]
    ex_id, sug = _start(api, wf_id)
    status, body = api.call("POST", *_decision(ex_id, sug, {"path": "summary.json", "json": {"rows": 2}}))
    assert status == 422, body
    assert list(body["error"]["details"]) == ["correction.json.total"]
