"""Web Push end to end (SQLite and PostgreSQL) against a push service on loopback (tests/support/push_service.py):
it checks the VAPID signature against the key the browser subscribed with and decrypts the message with the keys
only the browser has. The outbox is sent by services/notifications/sender.py when each test chooses (its scanner is
off here), so retries are checked without waiting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from core import notifications as N
from services.models.notifications import OutboxRow
from services.notifications import sender
from services.orm import utcnow
from tests.conftest import Api, make_user
from tests.support.push_service import PushService


@pytest.fixture
def push_service():
    service = PushService().start()
    yield service
    service.stop()


@pytest.fixture
def settings(settings):
    return settings.with_overrides(notify_scan_s=0, vapid_subject="mailto:ops@coach.test", push_ttl_s=3600)


@pytest.fixture
def lead(app, services) -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'lead@test.local', 'lead')}"
    return Api(client, services)


def subscribed(who: Api, push_service: PushService):
    key = who.ok("GET", "/api/notifications/push/key")["public_key"]
    browser = push_service.subscribe(key)
    made = who.ok("POST", "/api/notifications/push/subscriptions", browser.subscription(), status=201)
    assert made["endpoint"] == browser.endpoint
    return browser


def waiting_approval(api: Api, message: str = "Pay 42?") -> str:
    wf = api.workflow(
        [
            {"id": "sign_off", "type": "approval", "message": message},
            {"id": "after", "tool": "echo", "params": {"paid": True}},
        ]
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    return ex["gate"]["approval_id"]


def push_rows(services) -> list[OutboxRow]:
    with services.db.read() as session:
        return list(session.scalars(select(OutboxRow).where(OutboxRow.channel == N.PUSH)))


def test_an_approval_request_is_pushed_signed_and_encrypted_to_each_subscribed_browser(
    api, lead, services, push_service
):
    key = lead.ok("GET", "/api/notifications/push/key")["public_key"]
    assert api.ok("GET", "/api/notifications/push/key")["public_key"] == key  # one key pair per installation
    laptop, phone = subscribed(lead, push_service), subscribed(lead, push_service)
    approval_id = waiting_approval(api)
    assert sender.deliver_due(services) == {"sent": 2}
    assert [r.refused for r in push_service.received] == [None, None]
    expected = {
        "title": "Approval requested",
        "body": "Pay 42?",
        "url": f"/queue?approval={approval_id}",
        "tag": f"approval:{approval_id}",
        "kind": "approval_requested",
    }
    assert laptop.received == [expected] and phone.received == [expected]
    headers = push_service.received[0].headers
    assert headers["ttl"] == "3600" and headers["urgency"] == "high" and headers["content-encoding"] == "aes128gcm"
    assert sender.deliver_due(services) == {}  # nothing sent twice


def test_a_push_service_answering_410_removes_the_subscription(api, lead, services, push_service):
    browser = subscribed(lead, push_service)
    assert len(lead.ok("GET", "/api/notifications/push/subscriptions")["items"]) == 1
    push_service.statuses = [410]
    waiting_approval(api)
    assert sender.deliver_due(services) == {"failed": 1}
    assert lead.ok("GET", "/api/notifications/push/subscriptions")["items"] == []
    assert push_rows(services)[0].last_status == 410
    waiting_approval(api, "Pay 43?")
    assert sender.deliver_due(services) == {} and browser.received == []  # no browser left to push to


def test_a_push_answered_500_is_retried_on_the_backoff_schedule(api, lead, services, push_service):
    browser = subscribed(lead, push_service)
    push_service.statuses = [500]
    waiting_approval(api)
    now = utcnow()
    assert sender.deliver_due(services, now) == {"pending": 1}
    row = push_rows(services)[0]
    assert row.attempts == 1 and row.last_status == 500 and browser.received == []
    assert sender.deliver_due(services, now + timedelta(seconds=N.retry_delay(1) - 1)) == {}  # not before its backoff
    assert sender.deliver_due(services, now + timedelta(seconds=N.retry_delay(1) + 1)) == {"sent": 1}
    assert len(browser.received) == 1 and len(push_service.received) == 2


def test_push_follows_the_persons_switches_per_event_kind(api, lead, services, push_service):
    browser = subscribed(lead, push_service)
    got = lead.ok("GET", "/api/notifications/settings")
    assert got["push"] is True and got["push_kinds"]["approval_requested"] is True
    assert got["push_kinds"]["suggestion_waiting"] is False
    lead.ok(
        "PUT",
        "/api/notifications/settings",
        {
            **{k: got[k] for k in ("email", "kinds", "timezone")},
            "push": True,
            "push_kinds": {"approval_requested": False},
        },
    )
    waiting_approval(api)
    assert push_rows(services) == [] and browser.received == []
    lead.ok("PUT", "/api/notifications/settings", {"push": False})
    assert lead.ok("GET", "/api/notifications/settings")["push"] is False
    code, body = lead.call("PUT", "/api/notifications/settings", {"push_kinds": {"someday": True}})
    assert code == 422


def test_unsubscribing_and_bad_subscriptions(api, lead, push_service):
    browser = subscribed(lead, push_service)
    subscription = browser.subscription()
    code, body = lead.call(
        "POST", "/api/notifications/push/subscriptions", {**subscription, "endpoint": "http://93.184.216.34/push/x"}
    )
    assert code == 422 and "endpoint" in body["error"]["details"]  # an outside host must be https
    code, body = lead.call(
        "POST", "/api/notifications/push/subscriptions", {**subscription, "endpoint": "https://10.1.2.3/push/x"}
    )
    assert code == 422 and "endpoint" in body["error"]["details"]  # the outbound rules refuse it
    bad_key = {**subscription, "keys": {"p256dh": "A" * 87, "auth": subscription["keys"]["auth"]}}
    code, body = lead.call("POST", "/api/notifications/push/subscriptions", bad_key)
    assert code == 422 and "keys.p256dh" in body["error"]["details"]
    assert lead.call("DELETE", "/api/notifications/push/subscriptions", {"endpoint": browser.endpoint})[0] == 204
    assert lead.ok("GET", "/api/notifications/push/subscriptions")["items"] == []
    assert lead.call("DELETE", "/api/notifications/push/subscriptions", {"endpoint": browser.endpoint})[0] == 404


def test_the_service_worker_is_served_at_the_root_as_javascript_never_kept_stale(settings, tmp_path):
    from api.app import create_app

    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><title>Coach</title>", encoding="utf-8")
    (dist / "sw.js").write_text("self.addEventListener('push', () => {});", encoding="utf-8")
    app = create_app(settings.with_overrides(frontend_dist=str(dist)), migrate=False)
    try:
        answer = app.test_client().get("/sw.js")
        assert answer.status_code == 200 and answer.mimetype == "text/javascript"
        assert answer.cache_control.no_cache and answer.headers["Service-Worker-Allowed"] == "/"
        assert "Set-Cookie" not in answer.headers
    finally:
        app.extensions["coach"].close()


def test_a_vapid_key_given_by_the_settings_is_the_one_browsers_subscribe_with_and_pushes_are_signed_with(
    settings, push_service
):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from api.app import create_app
    from tests.support.push_service import b64

    key = ec.generate_private_key(ec.SECP256R1())
    raw = b64(key.private_numbers().private_value.to_bytes(32, "big"))
    public = b64(
        key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    )
    app = create_app(settings.with_overrides(vapid_private_key=raw), migrate=False)
    try:
        services = app.extensions["coach"]
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, 'ann@test.local', 'lead')}"
        who = Api(client, services)
        assert who.ok("GET", "/api/notifications/push/key")["public_key"] == public
        browser = subscribed(who, push_service)
        approval_id = waiting_approval(who)
        assert sender.deliver_due(services) == {"sent": 1}
        assert push_service.received[0].refused is None  # signed with the given key: the push service checked it
        assert browser.received[0]["tag"] == f"approval:{approval_id}"
    finally:
        services.runner.wait_idle(5)
        services.close()
