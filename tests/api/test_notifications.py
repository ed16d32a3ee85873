"""Notifications end to end (SQLite and PostgreSQL): a real SMTP server (aiosmtpd) and a webhook receiver on loopback;
the outbox sent by services/notifications/sender.py (its scanner is off here: each test sends when it chooses, at the
instant it chooses, so backoff, quiet hours and escalation are checked without waiting)."""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest
from sqlalchemy import select, update
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from core import notifications as N
from services.models.notifications import ActionLink, OutboxRow
from services.notifications import sender
from services.orm import utcnow
from tests.conftest import Api, make_user
from tests.support.receivers import smtp_inbox, webhook_receiver


@pytest.fixture
def inbox():
    with smtp_inbox() as box:
        yield box


@pytest.fixture
def receiver():
    with webhook_receiver() as server:
        yield server


@pytest.fixture
def settings(settings, inbox):
    return settings.with_overrides(
        smtp_host="127.0.0.1", smtp_port=inbox.port, notify_scan_s=0, public_url="http://coach.test"
    )


def as_user(app, services, address: str, role: str) -> Api:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {make_user(services, address, role)}"
    return Api(client, services)


@pytest.fixture
def lead(app, services) -> Api:
    return as_user(app, services, "lead@test.local", "lead")


def waiting_approval(api: Api, message: str = "Pay 42?") -> tuple[dict, str]:
    wf = api.workflow(
        [
            {"id": "sign_off", "type": "approval", "message": message},
            {"id": "after", "tool": "echo", "params": {"paid": True}},
        ]
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    return ex, ex["gate"]["approval_id"]


def links_in(message) -> dict[str, str]:
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    return {
        m.group(1): m.group(2) for m in re.finditer(r"^(Approve|Reject): http://coach\.test(/act/\S+)$", text, re.M)
    }


def outbox(services, **where) -> list[OutboxRow]:
    with services.db.read() as session:
        query = select(OutboxRow)
        for key, value in where.items():
            query = query.where(getattr(OutboxRow, key) == value)
        return list(session.scalars(query))


def test_an_approval_request_sends_one_email_whose_link_decides_once_as_its_person(api, lead, app, services, inbox):
    ex, approval_id = waiting_approval(api)
    sender.deliver_due(services)
    mails = inbox.to("lead@test.local")
    assert len(mails) == 1 and "Pay 42?" in mails[0]["Subject"]
    found = links_in(mails[0])
    assert set(found) == {"Approve", "Reject"}
    html = mails[0].get_body(("html",)).get_content()  # the same links as buttons, for mail apps that show HTML
    for label, path in found.items():
        assert f'<a href="http://coach.test{path}" style="' in html and f">{label}</a>" in html
    assert "<h2" in html and "Pay 42?" in html
    web = app.test_client()  # no session, no token: the link is the credential
    page = web.get(found["Approve"])
    assert page.status_code == 200 and b"<form" in page.data
    assert api.ok("GET", f"/api/approvals/{approval_id}")["status"] == "pending"  # a GET never decides
    done = web.post(found["Approve"], data={"comment": "fine by me"})
    assert done.status_code == 200 and b"approved" in done.data
    approval = api.ok("GET", f"/api/approvals/{approval_id}")
    assert approval["status"] == "approved"
    assert approval["decisions"][0]["user"] == "lead@test.local" and approval["decisions"][0]["comment"] == "fine by me"
    assert api.settle(ex["execution_id"])["status"] == "completed"
    audit = api.ok("GET", f"/api/audit?execution_id={ex['execution_id']}")["items"]
    assert any(e["action"] == "approval_decision" and e["actor"] == "lead@test.local" for e in audit)
    again = web.post(found["Approve"], data={})
    assert again.status_code == 409 and b"already used" in again.data
    other = web.post(found["Reject"], data={})  # the pair is one link: used once for both
    assert other.status_code == 409
    sender.deliver_due(services)
    assert len(inbox.to("lead@test.local")) == 1  # nothing sent twice


def test_forged_expired_and_decided_elsewhere_links_are_refused(api, lead, app, services, inbox):
    _, approval_id = waiting_approval(api)
    sender.deliver_due(services)
    approve = links_in(inbox.to("lead@test.local")[0])["Approve"]
    web = app.test_client()
    payload, mac = approve.removeprefix("/act/").split(".")
    forged = N.seal_link(
        b"not the server's key", json.loads(__import__("base64").urlsafe_b64decode(payload + "==="))["l"], "approve"
    )
    assert web.post(f"/act/{forged}").status_code == 409
    assert web.get(f"/act/{payload}.{mac[:-2]}xx").status_code == 409
    with services.db.transaction() as session:
        session.execute(update(ActionLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    expired = web.post(approve)
    assert expired.status_code == 409 and b"expired" in expired.data
    with services.db.transaction() as session:
        session.execute(update(ActionLink).values(expires_at=utcnow() + timedelta(hours=1)))
    api.ok("POST", f"/api/approvals/{approval_id}", {"decision": "reject", "comment": "no"})
    elsewhere = web.post(approve)
    assert elsewhere.status_code == 409 and b"decided elsewhere" in elsewhere.data
    assert api.ok("GET", f"/api/approvals/{approval_id}")["status"] == "rejected"


def test_rows_are_stored_with_the_event_and_a_dead_senders_claim_is_retried_after_its_lease(api, lead, services, inbox):
    _, approval_id = waiting_approval(api)
    rows = outbox(services, event_id=f"approval:{approval_id}")
    assert {r.address for r in rows} == {"lead@test.local", "admin@test.local"}
    assert all(r.status == N.PENDING for r in rows)  # committed with the approval, nothing sent yet
    now = utcnow()
    claimed = sender.claim(services, "a sender that dies", now)  # claimed, then never sent nor recorded
    assert len(claimed) == 2
    assert sender.deliver_due(services, now + timedelta(seconds=1)) == {}  # its lease still holds
    assert inbox.messages == []
    later = now + timedelta(seconds=services.settings.notify_lease_s + 1)
    assert sender.deliver_due(services, later) == {N.SENT: 2}
    assert sender.deliver_due(services, later + timedelta(hours=1)) == {}
    assert len(inbox.to("lead@test.local")) == 1 and len(inbox.to("admin@test.local")) == 1


def test_a_webhook_is_signed_retried_with_backoff_after_a_500_and_shown_failing_meanwhile(api, services, receiver):
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    made = api.ok(
        "POST", "/api/notifications/webhooks", {"name": "ops", "url": url, "events": ["approval_requested"]}, status=201
    )
    secret = made["secret"]
    receiver.statuses = [500]
    _, approval_id = waiting_approval(api)
    now = utcnow()
    sender.deliver_due(services, now)
    assert len(receiver.requests) == 1
    headers, body = receiver.requests[0]
    assert N.verify_signature(secret, body, headers["x-coach-signature"])
    # Standard Webhooks, as a receiver checks it with that library: the id, this attempt's time, the signature
    assert Webhook(secret.encode()).verify(body, headers)["id"] == headers["webhook-id"] == headers["x-coach-delivery"]
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 300
    with pytest.raises(WebhookVerificationError):  # another secret, or the body changed, is refused
        Webhook(b"another secret").verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret.encode()).verify(body.replace(b"approval", b"APPROVAL"), headers)
    assert json.loads(body)["data"]["approval_id"] == approval_id and json.loads(body)["event"] == "approval_requested"
    endpoint = api.ok("GET", "/api/notifications/webhooks")["items"][0]
    assert endpoint["failing"] is True and endpoint["last_status"] == 500 and "secret" not in endpoint
    assert endpoint["deliveries"][0]["status"] == "pending" and endpoint["deliveries"][0]["attempts"] == 1
    sender.deliver_due(services, now + timedelta(seconds=N.retry_delay(1) - 1))
    assert len(receiver.requests) == 1  # not before its backoff
    sender.deliver_due(services, now + timedelta(seconds=N.retry_delay(1) + 1))
    assert len(receiver.requests) == 2
    assert receiver.requests[1][0]["x-coach-delivery"] == headers["x-coach-delivery"]  # the same delivery id
    endpoint = api.ok("GET", "/api/notifications/webhooks")["items"][0]
    assert endpoint["failing"] is False and endpoint["deliveries"][0]["status"] == "sent"


def test_a_webhook_url_the_outbound_rules_refuse_is_422(api):
    code, body = api.call("POST", "/api/notifications/webhooks", {"url": "http://10.1.2.3/hook"})
    assert code == 422 and "url" in body["error"]["details"]


def test_quiet_hours_hold_email_until_they_end(api, lead, services, inbox):
    now = utcnow()
    start, end = (now - timedelta(hours=1)).strftime("%H:%M"), (now + timedelta(hours=1)).strftime("%H:%M")
    lead.ok(
        "PUT", "/api/notifications/settings", {"email": True, "quiet_start": start, "quiet_end": end, "timezone": "UTC"}
    )
    waiting_approval(api)
    sender.deliver_due(services)
    assert inbox.to("admin@test.local") and not inbox.to("lead@test.local")
    sender.deliver_due(services, now + timedelta(hours=1, minutes=2))
    assert len(inbox.to("lead@test.local")) == 1


def test_an_undecided_review_escalates_once_to_the_routes_next_people(api, lead, app, services, inbox):
    as_user(app, services, "lead2@test.local", "lead")
    api.ok(
        "POST",
        "/api/notifications/routes",
        {
            "name": "payments",
            "events": ["approval_requested"],
            "users": ["lead@test.local"],
            "escalate_after_s": 600,
            "escalate_users": ["lead2@test.local"],
        },
        status=201,
    )
    waiting_approval(api)
    now = utcnow()
    sender.run_once(services, now)
    assert len(inbox.to("lead@test.local")) == 1 and not inbox.to("admin@test.local")  # the route chose
    sender.run_once(services, now + timedelta(seconds=300))
    assert not inbox.to("lead2@test.local")
    sender.run_once(services, now + timedelta(seconds=601))
    sender.run_once(services, now + timedelta(seconds=1200))
    escalated = inbox.to("lead2@test.local")
    assert len(escalated) == 1 and escalated[0]["Subject"].startswith("Still waiting")
    assert "Approve" in links_in(escalated[0])


def test_a_destructive_review_opens_the_web_app_instead_of_deciding_from_the_email(api, lead, services, inbox):
    wf = api.workflow([{"id": "wipe", "tool": "shell.run", "params": {"command": ["echo", "hi"]}}])
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    sender.deliver_due(services)
    text = inbox.to("lead@test.local")[0].get_body(("plain",)).get_content()
    assert "/act/" not in text and "Decide it in Coach (the tool is destructive): http://coach.test/queue" in text


def test_settings_are_per_person_and_nonsense_is_422(api, lead):
    got = lead.ok("GET", "/api/notifications/settings")
    assert got["email_available"] is True  # COACH_SMTP_HOST is set here
    assert got["email"] is True and got["kinds"]["suggestion_waiting"] is False
    assert got["kinds"]["approval_requested"] is True
    code, body = lead.call("PUT", "/api/notifications/settings", {"quiet_start": "25:00", "quiet_end": "07:00"})
    assert code == 422 and "quiet_start" in body["error"]["details"]
    code, body = lead.call("PUT", "/api/notifications/settings", {"timezone": "Mars/Olympus"})
    assert code == 422
    assert lead.call("GET", "/api/notifications/routes")[0] == 403


def test_a_failed_run_and_a_question_reach_whoever_started_it_and_suggestions_only_when_chosen(api, services, inbox):
    failing = api.workflow([{"id": "boom", "tool": "echo", "params": {"x": "{{ vars.missing.deeper }}"}}], name="f")
    failed = api.settle(api.start(failing["id"])["execution_id"])
    assert failed["status"] == "failed"
    asking = api.workflow(
        [
            {
                "id": "ask",
                "tool": "echo",
                "params": {},
                "requires_clarification": True,
                "clarification_question": "Which supplier?",
            }
        ],
        name="q",
    )
    assert api.settle(api.start(asking["id"])["execution_id"])["status"] == "waiting_clarification"
    coached = api.workflow([{"id": "greet", "tool": "echo", "params": {"m": "hi"}}], name="c")
    api.start(coached["id"], mode="coaching")
    sender.deliver_due(services)
    subjects = sorted(m["Subject"] for m in inbox.to("admin@test.local"))
    assert subjects == ["A question: Which supplier?", "A run failed"]  # no suggestion: opt-in
    failure = (
        next(m for m in inbox.to("admin@test.local") if m["Subject"] == "A run failed")
        .get_body(("plain",))
        .get_content()
    )
    assert f"Open in Coach: http://coach.test/executions/{failed['execution_id']}" in failure
    api.ok("PUT", "/api/notifications/settings", {"kinds": {"suggestion_waiting": True}})
    second = api.settle(api.start(coached["id"], mode="coaching")["execution_id"])
    assert second["status"] == "waiting_decision"
    sender.deliver_due(services)
    assert [m["Subject"] for m in inbox.to("admin@test.local")][-1] == "A suggestion waits: step greet"


def test_the_next_suggestion_of_an_operators_own_decision_is_not_sent_as_news(api, services, inbox):
    api.ok("PUT", "/api/notifications/settings", {"kinds": {"suggestion_waiting": True}})
    wf = api.workflow(
        [
            {"id": "greet", "tool": "echo", "params": {"m": "hi"}},
            {"id": "close", "tool": "echo", "params": {"m": "bye"}},
        ],
        name="two",
    )
    ex = api.settle(api.start(wf["id"], mode="coaching")["execution_id"])
    sender.deliver_due(services)
    assert "A suggestion waits: step greet" in [m["Subject"] for m in inbox.to("admin@test.local")]

    api.ok(
        "POST",
        f"/api/executions/{ex['execution_id']}/coaching/decision",
        {"suggestion_id": ex["gate"]["suggestion_id"], "decision": "accept"},
    )
    assert api.settle(ex["execution_id"])["gate"]["step_id"] == "close"
    sender.deliver_due(services)

    # the operator who accepted is looking at the next one: no mail about it
    assert "A suggestion waits: step close" not in [m["Subject"] for m in inbox.to("admin@test.local")]


def test_a_deadline_near_is_sent_once_before_the_approval_times_out(api, lead, services, inbox):
    wf = api.workflow([{"id": "sign_off", "type": "approval", "message": "Sign?", "timeout_s": 300}])
    assert api.settle(api.start(wf["id"])["execution_id"])["status"] == "waiting_approval"
    now = utcnow()
    sender.run_once(services, now)
    sender.run_once(services, now + timedelta(seconds=10))
    near = [m for m in inbox.to("lead@test.local") if m["Subject"].startswith("Deadline near")]
    assert len(near) == 1 and "Approve" in links_in(near[0])


def test_an_event_whose_transaction_rolls_back_leaves_no_notification_and_one_that_commits_leaves_its_rows(
    api, lead, services
):
    from services.gateway import calls

    workspace_id = api.ok("GET", "/api/auth/me")["workspace_id"]
    with pytest.raises(RuntimeError):
        with services.command() as uow:
            held = calls.open_review(uow, workspace_id, "bot", "sql.query", {"query": "DELETE FROM t"}, None)
            raise RuntimeError("the process dies before the commit")
    assert outbox(services, event_id=f"approval:{held.id}") == []
    with services.command() as uow:
        kept = calls.open_review(uow, workspace_id, "bot", "sql.query", {"query": "DELETE FROM t"}, None)
    rows = outbox(services, event_id=f"approval:{kept.id}")
    assert {(r.kind, r.address) for r in rows} == {
        ("review_held", "lead@test.local"),
        ("review_held", "admin@test.local"),
    }


def test_a_demotion_reaches_the_leads_and_admins(api, lead, app, services, inbox):
    from services.notifications import outbox as notification_outbox

    as_user(app, services, "operator@test.local", "operator")
    workspace_id = api.ok("GET", "/api/auth/me")["workspace_id"]
    with services.db.transaction() as session:  # what services/metrics/evidence.py notes when spot checks demote
        notification_outbox.demoted(session, workspace_id, "wf-1", None, "spot-check acceptance 40%", 7)
    sender.deliver_due(services)
    assert {m["To"] for m in inbox.messages} == {"lead@test.local", "admin@test.local"}
    assert "spot-check acceptance 40%" in inbox.to("lead@test.local")[0].get_body(("plain",)).get_content()


def test_the_html_alternative_escapes_what_people_wrote_and_makes_only_links_buttons():
    from services.notifications.email import html

    made = html(
        "Pay <b>42</b>?",
        [
            "Send <script>x</script> & co",
            "line one\nline two",
            "",
            "Approve: https://coach.test/act/a?x=1&y=2",
            "Ratio: 3:1 not a link",
        ],
    )
    assert "<b>" not in made and "&lt;b&gt;42&lt;/b&gt;" in made and "&lt;script&gt;" in made
    assert "&amp; co" in made and "line one<br>line two" in made
    assert '<a href="https://coach.test/act/a?x=1&amp;y=2" style="' in made and ">Approve</a>" in made
    assert made.count("<a ") == 1 and "<p>Ratio: 3:1 not a link</p>" in made


def test_a_routes_users_must_be_members_of_the_workspace(app, api, lead, services):
    """Issue 40, item 4: a typo or another workspace's member is a 422 naming them (the route would mail nobody)."""
    make_user(services, "elsewhere@other.test", "lead", workspace_slug="other")
    body = {
        "name": "payments",
        "events": ["approval_requested"],
        "users": ["lead@test.local", "led@test.local", "elsewhere@other.test"],
        "escalate_users": ["nobody@x.test"],
    }
    status, answer = api.call("POST", "/api/notifications/routes", body)
    assert status == 422, answer
    details = answer["error"]["details"]
    assert "led@test.local" in details["users"][0] and "elsewhere@other.test" in details["users"][0]
    assert "lead@test.local" not in details["users"][0]
    assert "nobody@x.test" in details["escalate_users"][0]
    assert api.ok("GET", "/api/notifications/routes")["items"] == []
    # members by email (any case) or by user id are accepted
    lead_id = lead.ok("GET", "/api/auth/me")["user"]["id"]
    route = api.ok(
        "POST",
        "/api/notifications/routes",
        {**body, "users": ["Lead@Test.local", lead_id], "escalate_users": []},
        status=201,
    )
    assert route["users"] == ["Lead@Test.local", lead_id]


def test_your_own_webhook_secret_signs_the_deliveries_and_a_bad_one_is_422(api, services, receiver):
    """Issue 40, item 1: docs/notifications.md says you may send your own `secret`."""
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    mine = "my-own-shared-secret-0123456789"
    made = api.ok(
        "POST",
        "/api/notifications/webhooks",
        {"url": url, "events": ["approval_requested"], "secret": mine},
        status=201,
    )
    assert made["secret"] == mine
    waiting_approval(api)
    sender.deliver_due(services)
    headers, body = receiver.requests[0]
    assert N.verify_signature(mine, body, headers["x-coach-signature"])
    assert "secret" not in api.ok("GET", "/api/notifications/webhooks")["items"][0]
    for bad in ("", "short", "x" * 257, "has a space in it 0123456789", 12345678901234567):
        status, answer = api.call("POST", "/api/notifications/webhooks", {"url": url, "secret": bad})
        assert status == 422 and "secret" in answer["error"]["details"], (bad, answer)
    assert len(api.ok("GET", "/api/notifications/webhooks")["items"]) == 1


def test_an_endpoint_whose_secret_cannot_be_read_fails_alone_and_the_other_rows_go_out(api, services, receiver):
    """Issue 40, item 3: after a COACH_SECRET_KEY change one endpoint's secret cannot be unsealed; that row fails with
    its reason (the endpoint shows failing), and the rows claimed in the same round are sent."""
    from services.models.notifications import WebhookEndpoint
    from services.notifications.webhooks import PURPOSE
    from services.toolservers.secrets import Secrets

    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    old = api.ok(
        "POST",
        "/api/notifications/webhooks",
        {"name": "old", "url": url + "/old", "events": ["approval_requested"]},
        status=201,
    )
    api.ok(
        "POST",
        "/api/notifications/webhooks",
        {"name": "new", "url": url + "/new", "events": ["approval_requested"]},
        status=201,
    )
    with services.db.transaction() as session:  # sealed under another server key, as before a key change
        session.get(WebhookEndpoint, old["id"]).secret = Secrets("a-key-this-server-no-longer-has", PURPOSE).seal(
            {"secret": "s" * 32}
        )
    waiting_approval(api)
    counts = sender.deliver_due(services)
    assert len(receiver.requests) == 1 and counts.get("pending") == 1 and counts.get(N.SENT, 0) >= 1, counts
    endpoints = {e["name"]: e for e in api.ok("GET", "/api/notifications/webhooks")["items"]}
    failed = endpoints["old"]
    assert failed["failing"] is True and "COACH_SECRET_KEY" in failed["last_error"], failed
    assert failed["deliveries"][0]["status"] == "pending" and failed["deliveries"][0]["attempts"] == 1
    assert "COACH_SECRET_KEY" in failed["deliveries"][0]["last_error"]
    assert endpoints["new"]["failing"] is False and endpoints["new"]["deliveries"][0]["status"] == "sent"


def test_under_separate_duties_the_starter_is_not_asked_to_approve(api, lead, services, inbox):
    """Issue 40, item 2: the admin who started the run may not decide it, so gets no approval email (whose links would
    answer 409), neither by role nor through a route naming them; the lead does."""
    api.ok(
        "POST",
        "/api/notifications/routes",
        {"name": "both", "events": ["approval_requested"], "users": ["admin@test.local", "lead@test.local"]},
        status=201,
    )
    wf = api.workflow(
        [
            {"id": "sign_off", "type": "approval", "message": "Pay 42?", "separate_duties": True},
            {"id": "after", "tool": "echo", "params": {"paid": True}},
        ]
    )
    ex = api.settle(api.start(wf["id"])["execution_id"])
    assert ex["status"] == "waiting_approval", ex
    sender.deliver_due(services)
    assert len(inbox.to("lead@test.local")) == 1
    assert inbox.to("admin@test.local") == []
