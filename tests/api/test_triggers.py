"""Starting workflows from outside (docs/triggers.md): signed webhooks and cron schedules through the app, on SQLite
and PostgreSQL. The sender is the test client without any cookie or token: the signature is the auth."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from core import triggers as T
from services.models.triggers import TriggerHook, TriggerSchedule
from tests.conftest import Api, authed_client, make_user

pytestmark = pytest.mark.shared_app

WORKFLOW = {
    "name": "Intake",
    "variables": {"order_id": {"type": "string", "required": True}, "amount": {"type": "number", "default": 1}},
    "steps": [{"id": "greet", "tool": "echo", "params": {"message": "{{ vars.order_id }}"}}],
}


def send(
    app,
    hook: dict,
    body=None,
    *,
    raw: bytes | None = None,
    secret: str | None = None,
    ts=None,
    delivery: str | None = "new",
    headers: dict | None = None,
):
    """POST a delivery as a sender would: no cookie, no token; signed unless told otherwise."""
    raw = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
    stamp = str(int(time.time()) if ts is None else ts)
    sent = {
        "Content-Type": "application/json",
        T.TIMESTAMP_HEADER: stamp,
        T.SIGNATURE_HEADER: T.sign(secret or hook["secret"], stamp, raw),
    }
    if delivery is not None:
        sent[T.DELIVERY_HEADER] = uuid.uuid4().hex if delivery == "new" else delivery
    sent.update(headers or {})
    response = app.test_client().post(hook["path"], data=raw, headers={k: v for k, v in sent.items() if v is not None})
    return response.status_code, response.get_json(silent=True)


def executions_total(api: Api) -> int:
    return api.ok("GET", "/api/executions/")["total"]


@pytest.fixture
def wf(api):
    return api.ok("POST", "/api/workflows", WORKFLOW, status=201)


@pytest.fixture
def hook(api, wf):
    return api.ok("POST", f"/api/workflows/{wf['id']}/hooks", {"name": "shop"}, status=201)


def test_a_signed_delivery_starts_the_workflow_with_its_variables_audited_and_recorded(app, api, wf, hook, services):
    assert hook["secret"].startswith("whsec_") and hook["url"].endswith(hook["path"])
    listed = api.ok("GET", f"/api/workflows/{wf['id']}/hooks")["items"]
    assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
    with services.db.read() as session:  # stored encrypted, not in the clear
        assert hook["secret"] not in session.get(TriggerHook, hook["id"]).secret
    status, body = send(app, hook, {"order_id": "A-1"}, delivery="d-1")
    assert status == 201 and body["duplicate"] is False and body["delivery_id"] == "d-1", body
    ex = api.settle(body["execution_id"])
    assert ex["variables"] == {"order_id": "A-1", "amount": 1}
    assert ex["trigger"]["kind"] == "webhook" and ex["trigger"]["hook_id"] == hook["id"]
    assert ex["trigger"]["delivery_id"] == "d-1" and ex["trigger"]["name"] == "shop"
    events = api.ok("GET", f"/api/audit?execution_id={ex['execution_id']}")["items"]
    triggered = [e for e in events if e["action"] == "execution_triggered"]
    assert len(triggered) == 1 and triggered[0]["after"]["delivery_id"] == "d-1"
    assert triggered[0]["after"]["hook_id"] == hook["id"]
    assert api.ok("GET", f"/api/workflows/{wf['id']}/hooks")["items"][0]["last_used_at"]


def test_a_triggered_runs_history_names_the_hook_not_its_id(app, api, hook):
    status, body = send(app, hook, {"order_id": "A-2"})
    assert status == 201, body
    history = api.ok("GET", f"/api/executions/{api.settle(body['execution_id'])['execution_id']}/history")
    started = [e for e in history["events"] if e["kind"] == "start"]
    assert len(started) == 1 and started[0]["text"].startswith("Started by webhook 'shop' in "), started
    assert hook["id"] not in json.dumps(history["events"])


def test_a_repeated_delivery_id_answers_the_first_execution_and_starts_nothing(app, api, hook):
    status, first = send(app, hook, {"order_id": "A-1"}, delivery="same")
    assert status == 201
    status, again = send(app, hook, {"order_id": "A-2"}, delivery="same")  # a replay inside the window
    assert status == 200 and again["duplicate"] is True and again["execution_id"] == first["execution_id"]
    assert executions_total(api) == 1


def test_copies_of_one_delivery_arriving_at_once_start_one_execution(app, api, hook):
    answers, barrier = [], threading.Barrier(6)

    def one():
        barrier.wait()
        answers.append(send(app, hook, {"order_id": "A-1"}, delivery="burst"))

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(s for s, _ in answers) == [200] * 5 + [201], answers
    assert len({b["execution_id"] for _, b in answers}) == 1
    assert executions_total(api) == 1


@pytest.mark.parametrize(
    "change", ["wrong_secret", "changed_body", "no_signature", "bad_format", "old", "future", "not_a_number"]
)
def test_a_bad_or_stale_signature_is_401_and_starts_nothing(app, api, hook, change):
    raw = json.dumps({"order_id": "A-1"}).encode()
    now = int(time.time())
    kwargs = {
        "wrong_secret": {"secret": "whsec_not-the-secret"},
        "changed_body": {
            "headers": {
                T.SIGNATURE_HEADER: T.sign(hook["secret"], now, b'{"order_id": "A-2"}'),
                T.TIMESTAMP_HEADER: str(now),
            }
        },
        "no_signature": {"headers": {T.SIGNATURE_HEADER: None}},
        "bad_format": {"headers": {T.SIGNATURE_HEADER: "md5=abc"}},
        "old": {"ts": now - T.TOLERANCE_S - 60},  # correctly signed, but captured more than 5 minutes ago
        "future": {"ts": now + T.TOLERANCE_S + 60},
        "not_a_number": {"headers": {T.TIMESTAMP_HEADER: "yesterday"}},
    }[change]
    status, body = send(app, hook, raw=raw, **kwargs)
    assert status == 401, body
    assert body["error"]["code"] in {"signature_missing", "signature_invalid", "timestamp_stale", "timestamp_invalid"}
    assert executions_total(api) == 0


def test_unknown_and_revoked_hooks_and_a_missing_delivery_id(app, api, wf, hook):
    status, body = send(app, {**hook, "path": f"/api/hooks/{uuid.uuid4().hex}"}, {"order_id": "A-1"})
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = send(app, hook, {"order_id": "A-1"}, delivery=None)
    assert status == 400 and body["error"]["code"] == "delivery_id_missing"
    api.ok("DELETE", f"/api/workflows/{wf['id']}/hooks/{hook['id']}", status=204)
    [revoked] = api.ok("GET", f"/api/workflows/{wf['id']}/hooks")["items"]
    assert revoked["active"] is False and revoked["revoked_at"]
    status, body = send(app, hook, {"order_id": "A-1"})
    assert status == 410 and body["error"]["code"] == "hook_revoked"
    assert executions_total(api) == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({"amount": 3}, "body.order_id"),
        ({"order_id": 5}, "body.order_id"),
        ({"order_id": "A", "surprise": 1}, "body.surprise"),
        (["order_id"], "body"),
    ],
)
def test_a_body_that_does_not_fit_the_variables_is_422_naming_the_field(app, api, hook, body, field):
    status, answer = send(app, hook, body)
    assert status == 422, answer
    assert field in answer["error"]["details"] or any(k.startswith(field) for k in answer["error"]["details"])
    assert executions_total(api) == 0


def test_a_mapping_reads_variables_from_paths_of_the_body(app, api, wf):
    bad = api.call("POST", f"/api/workflows/{wf['id']}/hooks", {"name": "m", "mapping": {"nope": "a"}})
    assert bad[0] == 422 and "mapping.nope" in bad[1]["error"]["details"]
    hook = api.ok(
        "POST",
        f"/api/workflows/{wf['id']}/hooks",
        {"name": "m", "mapping": {"order_id": "order.id", "amount": "lines.0.total"}},
        status=201,
    )
    status, body = send(app, hook, {"order": {"id": "B-7"}, "lines": [{"total": 9.5}], "other": True})
    assert status == 201, body
    assert api.settle(body["execution_id"])["variables"] == {"order_id": "B-7", "amount": 9.5}
    status, body = send(app, hook, {"order": {}})
    assert status == 422 and "body.order.id" in body["error"]["details"]


def test_deliveries_beyond_the_rate_limit_are_429(settings, api, hook):
    from api.app import create_app

    limited = create_app(settings.with_overrides(hook_rate_limit="3 per minute"), migrate=False, recover=False)
    try:
        statuses = [send(limited, hook, {"order_id": f"A-{i}"})[0] for i in range(5)]
        assert statuses == [201, 201, 201, 429, 429]
        status, body = send(limited, hook, {"order_id": "A-9"})
        assert status == 429 and body["error"]["code"] == "too_many_requests"
        assert executions_total(api) == 3
    finally:
        limited.extensions["coach"].runner.wait_idle(5)
        limited.extensions["coach"].close()


def test_another_workspace_neither_sees_nor_manages_the_hooks_and_schedules(app, api, wf, hook, services):
    schedule = api.ok(
        "POST",
        f"/api/workflows/{wf['id']}/schedules",
        {"name": "daily", "cron": "0 9 * * *", "variables": {"order_id": "X"}},
        status=201,
    )
    other = authed_client(app)  # an admin of the default workspace, then moved to a workspace of their own
    token = make_user(services, "lead@elsewhere.test", "lead", "elsewhere")
    other.environ_base.update(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_X_COACH_WORKSPACE="elsewhere")
    them = Api(other, services)
    for method, path in (
        ("GET", f"/api/workflows/{wf['id']}/hooks"),
        ("GET", f"/api/workflows/{wf['id']}/schedules"),
        ("DELETE", f"/api/workflows/{wf['id']}/hooks/{hook['id']}"),
        ("PATCH", f"/api/workflows/{wf['id']}/schedules/{schedule['id']}"),
        ("DELETE", f"/api/workflows/{wf['id']}/schedules/{schedule['id']}"),
        ("POST", f"/api/workflows/{wf['id']}/hooks"),
    ):
        status, body = them.call(
            method, path, {"enabled": False} if method == "PATCH" else ({"name": "x"} if method == "POST" else None)
        )
        assert status == 404, (method, path, body)
    assert api.ok("GET", f"/api/workflows/{wf['id']}/hooks")["items"][0]["active"] is True
    assert api.ok("GET", f"/api/workflows/{wf['id']}/schedules")["items"][0]["enabled"] is True


def test_operators_read_triggers_but_only_leads_manage_them(app, api, wf, hook, services):
    operator = Api(authed_client(app, "operator"), services)
    assert operator.ok("GET", f"/api/workflows/{wf['id']}/hooks")["items"][0]["id"] == hook["id"]
    assert operator.call("POST", f"/api/workflows/{wf['id']}/hooks", {"name": "x"})[0] == 403
    assert operator.call("DELETE", f"/api/workflows/{wf['id']}/hooks/{hook['id']}")[0] == 403
    assert operator.call("POST", f"/api/workflows/{wf['id']}/schedules", {"name": "x", "cron": "* * * * *"})[0] == 403


@pytest.mark.parametrize(
    "body, field",
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "* * * *"}, "cron"),
        ({"cron": "0 0 30 2 *"}, "cron"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"timezone": "../../etc/passwd"}, "timezone"),
        ({"variables": {"order_id": 3}}, "variables.order_id"),
        ({"variables": {}}, "variables.order_id"),
    ],
)
def test_a_schedule_that_does_not_parse_or_fit_is_422_naming_the_field(api, wf, body, field):
    data = {"name": "s", "cron": "0 9 * * *", "timezone": "UTC", "variables": {"order_id": "X"}, **body}
    status, answer = api.call("POST", f"/api/workflows/{wf['id']}/schedules", data)
    assert status == 422 and field in answer["error"]["details"], answer
    assert api.ok("GET", f"/api/workflows/{wf['id']}/schedules")["items"] == []


def test_a_schedule_shows_its_next_fire_times_in_its_zone_and_can_be_disabled(api, wf):
    schedule = api.ok(
        "POST",
        f"/api/workflows/{wf['id']}/schedules",
        {"name": "mornings", "cron": "0  9 * * MON-FRI", "timezone": "Europe/Berlin", "variables": {"order_id": "X"}},
        status=201,
    )
    assert schedule["cron"] == "0 9 * * MON-FRI" and "09:00" in schedule["description"]
    times = [T_parse(t).astimezone(ZoneInfo("Europe/Berlin")) for t in schedule["next_fire_times"]]
    assert len(times) == 5 and times == sorted(times)
    assert all((t.hour, t.minute) == (9, 0) and t.weekday() < 5 for t in times)
    assert schedule["next_fire_at"] == schedule["next_fire_times"][0]
    off = api.ok("PATCH", f"/api/workflows/{wf['id']}/schedules/{schedule['id']}", {"enabled": False})
    assert off["enabled"] is False and off["next_fire_at"] is None and off["next_fire_times"] == []
    on = api.ok(
        "PATCH", f"/api/workflows/{wf['id']}/schedules/{schedule['id']}", {"enabled": True, "cron": "*/5 * * * *"}
    )
    assert on["enabled"] is True and T_parse(on["next_fire_at"]).minute % 5 == 0
    preview = api.ok("GET", f"/api/workflows/{wf['id']}/schedules/preview?cron=30+2+*+*+*&timezone=America/New_York")
    assert len(preview["next_fire_times"]) == 5 and "02:30" in preview["description"]
    status, body = api.call("GET", f"/api/workflows/{wf['id']}/schedules/preview?cron=x")
    assert status == 422 and "cron" in body["error"]["details"]
    api.ok("DELETE", f"/api/workflows/{wf['id']}/schedules/{schedule['id']}", status=204)
    assert api.ok("GET", f"/api/workflows/{wf['id']}/schedules")["items"] == []


def T_parse(text: str):
    from datetime import datetime

    return datetime.fromisoformat(text)


def test_a_due_schedule_fires_once_and_slots_missed_while_down_fire_once(api, wf, services):
    schedule = api.ok(
        "POST",
        f"/api/workflows/{wf['id']}/schedules",
        {"name": "hourly", "cron": "0 * * * *", "variables": {"order_id": "S-1"}},
        status=201,
    )
    slot = T_parse(schedule["next_fire_at"])
    assert services.runner.scans.fire_due(slot - timedelta(seconds=1)) == 0  # not yet
    assert services.runner.scans.fire_due(slot + timedelta(seconds=1)) == 1
    assert services.runner.scans.fire_due(slot + timedelta(seconds=2)) == 0  # the same slot again: nothing
    fired = api.ok("GET", f"/api/workflows/{wf['id']}/schedules")["items"][0]
    assert T_parse(fired["next_fire_at"]) == slot + timedelta(hours=1) and fired["last_error"] == ""
    ex = api.settle(fired["last_execution_id"])
    assert ex["variables"]["order_id"] == "S-1"
    assert ex["trigger"]["kind"] == "schedule" and ex["trigger"]["schedule_id"] == schedule["id"]
    assert T_parse(ex["trigger"]["fire_at"]) == slot
    # down for three days: 72 slots missed, one fire on the first scan after the restart
    later = slot + timedelta(days=3, minutes=10)
    assert services.runner.scans.fire_due(later) == 1
    assert services.runner.scans.fire_due(later) == 0
    after = api.ok("GET", f"/api/workflows/{wf['id']}/schedules")["items"][0]
    assert T_parse(after["next_fire_at"]) == slot + timedelta(days=3, hours=1)
    assert executions_total(api) == 2
    audit = [e for e in api.ok("GET", "/api/audit?per_page=200")["items"] if e["action"] == "execution_triggered"]
    assert len(audit) == 2 and {e["after"]["schedule_id"] for e in audit} == {schedule["id"]}


def test_a_fire_whose_workflow_is_gone_starts_nothing_and_disables_the_schedule(api, wf, services):
    schedule = api.ok(
        "POST",
        f"/api/workflows/{wf['id']}/schedules",
        {"name": "nightly", "cron": "0 0 * * *", "variables": {"order_id": "S-1"}},
        status=201,
    )
    api.ok("DELETE", f"/api/workflows/{wf['id']}", status=204)
    assert services.runner.scans.fire_due(T_parse(schedule["next_fire_at"]) + timedelta(minutes=1)) == 0
    with services.db.read() as session:
        row = session.scalar(select(TriggerSchedule).where(TriggerSchedule.id == schedule["id"]))
        assert row.enabled is False and row.next_fire_at is None and "not found" in row.last_error
    assert executions_total(api) == 0


def test_a_body_that_is_not_json_is_400_and_one_sent_as_another_type_is_415(app, api, hook):
    """docs/triggers.md's table (issue 40, item 6): malformed JSON is a 400 bad_request, a Content-Type that is not
    JSON a 415; neither starts anything."""
    status, body = send(app, hook, raw=b'{"order_id": "A-1",')
    assert status == 400 and body["error"]["code"] == "bad_request", body
    status, body = send(app, hook, raw=b"order_id=A-1", headers={"Content-Type": "text/plain"})
    assert status == 415 and body["error"]["code"] == "unsupported_media_type", body
    assert executions_total(api) == 0
