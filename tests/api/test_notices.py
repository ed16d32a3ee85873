"""/api/notices: the dashboard's notices (recent demotions and learned-rule changes) read back from the audit log,
each with the seq its live event carries as `audit_seq`, for every member of the workspace and no one else."""

from __future__ import annotations

import pytest

from tests.api.test_coaching_metrics import _spot_check, _workflow
from tests.api.test_correction_packs import REFUND, _decide, _Pushed, _refund_suggestion
from tests.conftest import Api, authed_client, make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)

QUICK = {"auto_alpha": 0.2, "coaching_after": 2, "auto_min_window": 3, "window": 5}


def _notices(api, **query) -> list[dict]:
    return api.ok("GET", "/api/notices", query_string=query)["items"]


def test_a_demotion_by_spot_checks_is_a_notice_with_its_reason_and_the_seq_its_event_carried(make_api):
    api = make_api(spot_check_rate=1.0)
    sent = _Pushed(api.client.application, make_user(api.services, "lead@test.local", "lead"))
    wf_id = _workflow(api, **QUICK)
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    for _ in range(6):
        if api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching":
            break
        _spot_check(api, wf_id, "reject")
    assert api.ok("GET", f"/api/workflows/{wf_id}")["mode"] == "coaching"

    [notice] = _notices(api)  # the promotion is no notice
    assert (notice["kind"], notice["actor"], notice["workflow_id"], notice["step_id"]) == (
        "demotion",
        "system",
        wf_id,
        None,
    )
    assert notice["workflow_name"] == "wf" and notice["spot_check_rate"] == 0.0
    assert notice["reason"].startswith("spot checks show acceptance below 85%")
    [event] = [p for e, p, _ in sent if e == "workflow_level_changed" and p.get("previous_mode") == "auto"]
    assert event["audit_seq"] == notice["id"] and event["reason"] == notice["reason"]


def test_a_leads_demotion_of_a_workflow_and_of_a_step_are_notices_saying_who(api):
    wf_id = _workflow(api, [{"id": "first", "tool": "echo", "params": {}}])
    api.ok("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "auto", "force": True, "reason": "tests"})
    api.ok("POST", f"/api/workflows/{wf_id}/steps/first/mode", {"mode": "coaching"})
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "coaching"})
    notices = _notices(api)
    assert [(n["kind"], n["step_id"], n["reason"]) for n in notices] == [
        ("demotion", None, "demoted by admin@test.local"),
        ("step_demotion", "first", "step set to coaching by admin@test.local"),
    ]
    assert notices[0]["id"] > notices[1]["id"]  # newest first
    assert [n["kind"] for n in _notices(api, limit=1)] == ["demotion"]


def test_a_learned_rule_that_starts_applying_is_a_notice_naming_the_rule(api):
    wf_id = api.workflow([REFUND], name="refunds")["id"]
    for _ in range(3):
        ex_id, sug = _refund_suggestion(api, wf_id)
        _decide(api, ex_id, sug, "correct", {**sug["params"], "currency": "GBP"})
    [notice] = _notices(api)
    assert (notice["kind"], notice["workflow_id"], notice["workflow_name"], notice["step_id"], notice["cause"]) == (
        "learned_rule_change",
        wf_id,
        "refunds",
        "refund",
        "correction",
    )
    assert [(r["field"], r["before"], r["after"]) for r in notice["started"]] == [("currency", "EUR", "GBP")]
    assert notice["stopped"] == [] and notice["pack_id"]


def test_every_member_reads_the_notices_of_their_own_workspace_only(api, app, services):
    wf_id = _workflow(api)
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "auto", "force": True, "reason": "tests"})
    api.ok("POST", f"/api/workflows/{wf_id}/mode", {"mode": "coaching"})
    operator = Api(authed_client(app, "operator"), services)
    assert [n["workflow_id"] for n in _notices(operator)] == [wf_id]
    stranger = app.test_client()
    stranger.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'x@other.test', 'admin', 'other')}"
    assert Api(stranger, services).ok("GET", "/api/notices")["items"] == []


def test_a_limit_outside_1_to_50_is_422(api):
    for limit in (0, 51, "many"):
        code, body = api.call("GET", "/api/notices", query_string={"limit": limit})
        assert code == 422 and "limit" in body["error"]["details"], body
