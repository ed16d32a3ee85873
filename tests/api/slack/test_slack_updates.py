"""Slack messages kept true (issue 33): a review decided anywhere else (the REST decision endpoint, a cancel) gets its
Slack message replaced by chat.update after the decision commits — who decided what, no buttons left — through an
outbox row stored with the decision (sent once, retried with backoff); and a notification route can send its
reviews to its own Slack channel. Against the real slack_sdk WebClient and a scripted Slack API on loopback."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core import notifications as N
from services.models.notifications import OutboxRow
from services.notifications import sender, slack_updates
from services.orm import utcnow
from services.slack import messages as M
from tests.api.slack.test_slack import (
    AFTER,
    SIGN_OFF,
    TOKEN,
    TOTAL,
    approve_value,
    as_user,
    post,
    waiting_approval,
)
from tests.support.slack_server import ScriptedSlack, click


@pytest.fixture
def slack():
    with ScriptedSlack(token=TOKEN, channels={"#payments": "C0PAYMENTS"}) as server:
        yield server


def slack_rows(services, kind: str | None = None) -> list[OutboxRow]:
    with services.db.read() as session:
        query = session.query(OutboxRow).filter(OutboxRow.channel == N.SLACK)
        if kind is not None:
            query = query.filter(OutboxRow.kind == kind)
        return query.order_by(OutboxRow.created_at).all()


def buttons(message_args: dict) -> list[str]:
    return [
        e.get("action_id")
        for block in message_args.get("blocks") or []
        if block.get("type") == "actions"
        for e in block.get("elements", [])
    ]


def test_a_review_decided_in_the_web_app_has_its_slack_message_updated_after_commit(
    app, api, services, slack, lead, configured
):
    approval = waiting_approval(api)
    sender.deliver_due(services)
    [review] = slack_rows(services)
    assert (review.slack_channel, review.approval_id) == ("C0REVIEWS", approval["approval_id"]) and review.slack_ts

    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve", "comment": "paid twice? no"})
    # stored with the decision, nothing called inside it: a killed process loses nothing, the sender sends it
    assert slack.calls("chat.update") == []
    [update] = slack_rows(services, slack_updates.UPDATE)
    assert (update.status, update.recipient) == (N.PENDING, review.id)

    sender.deliver_due(services)
    sender.deliver_due(services)  # sent once
    [call] = slack.calls("chat.update")
    args = call["args"]
    assert (args["channel"], args["ts"]) == ("C0REVIEWS", review.slack_ts)
    assert args["text"].startswith("Approved by lead@test.local: Approval requested: Pay 42?")
    shown = json.dumps(args["blocks"])
    assert "*Approved* by lead@test.local <!date^" in shown and "paid twice? no" in shown
    assert buttons(args) == [] and M.APPROVE not in shown
    assert slack_rows(services, slack_updates.UPDATE)[0].status == N.SENT

    # a click on the old message is still refused, naming who decided
    other = as_user(app, services, "lead2@test.local", "lead")
    other.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD2"})
    answer = post(app, configured, click("U0LEAD2", M.APPROVE, approve_value(approval))).get_json()
    assert answer["outcome"] == "refused" and "approved by lead@test.local" in answer["message"]
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "approved"


def test_a_cancelled_run_expires_its_review_and_the_slack_message_says_so(api, services, slack, configured):
    approval = waiting_approval(api)
    sender.deliver_due(services)
    api.ok("POST", f"/api/executions/{approval['execution_id']}/cancel")
    sender.deliver_due(services)
    [call] = slack.calls("chat.update")
    assert call["args"]["channel"] == "C0REVIEWS" and buttons(call["args"]) == []
    shown = json.dumps(call["args"]["blocks"])
    assert "*Expired*" in shown and "the execution was cancelled" in shown


def test_a_failed_update_is_retried_with_backoff_and_sent_once(api, services, slack, lead, configured):
    approval = waiting_approval(api)
    sender.deliver_due(services)
    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "reject", "comment": "no"})
    slack.fail("chat.update", "ratelimited", status=429, retry_after=1)
    now = utcnow()
    sender.deliver_due(services, now=now)
    [update] = slack_rows(services, slack_updates.UPDATE)
    assert update.status == N.PENDING and update.attempts == 1 and update.next_attempt_at > now
    assert "ratelimited" in (update.last_error or "")

    sender.deliver_due(services, now=now)  # not due yet: not tried again
    assert len(slack.calls("chat.update")) == 1
    sender.deliver_due(services, now=now + timedelta(hours=1))
    sender.deliver_due(services, now=now + timedelta(hours=2))
    calls = slack.calls("chat.update")
    assert len(calls) == 2 and "*Rejected* by lead@test.local" in json.dumps(calls[1]["args"]["blocks"])
    assert slack_rows(services, slack_updates.UPDATE)[0].status == N.SENT


def test_a_review_decided_before_its_message_went_out_is_posted_decided_then_kept_so(
    api, services, slack, lead, configured
):
    approval = waiting_approval(api)  # its Slack row waits for the sender
    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})
    sender.deliver_due(services)
    [posted] = slack.calls("chat.postMessage")
    assert buttons(posted["args"]) == [] and "*Approved* by lead@test.local" in json.dumps(posted["args"]["blocks"])
    assert all(r.status == N.SENT for r in slack_rows(services))
    assert all(buttons(c["args"]) == [] for c in slack.calls("chat.update"))


# -- a route's own Slack channel ------------------------------------------------------------------------------------


def test_a_route_sends_its_reviews_to_its_own_slack_channel_not_the_default(api, services, slack, lead, configured):
    routed = api.workflow([TOTAL, SIGN_OFF, AFTER], name="payments")
    other = api.workflow([TOTAL, SIGN_OFF, AFTER], name="other")
    made = api.ok(
        "POST",
        "/api/notifications/routes",
        {
            "name": "payments",
            "events": ["approval_requested"],
            "workflow_id": routed["id"],
            "slack_channel": "#payments",
        },
        status=201,
    )
    assert made["slack_channel"] == "#payments" and made["users"] == []
    for wf in (routed, other):
        assert api.settle(api.start(wf["id"])["execution_id"])["status"] == "waiting_approval"
    sender.deliver_due(services)

    assert sorted(c["args"]["channel"] for c in slack.calls("chat.postMessage")) == ["#payments", "C0REVIEWS"]
    by_channel = {r.slack_channel: r for r in slack_rows(services)}
    assert set(by_channel) == {"C0PAYMENTS", "C0REVIEWS"}  # the id Slack answered, which chat.update needs
    routed_approval = by_channel["C0PAYMENTS"].approval_id

    lead.ok("POST", f"/api/approvals/{routed_approval}", {"decision": "approve"})
    sender.deliver_due(services)
    [call] = slack.calls("chat.update")
    assert (call["args"]["channel"], call["args"]["ts"]) == ("C0PAYMENTS", by_channel["C0PAYMENTS"].slack_ts)


def test_a_routes_slack_channel_is_a_channel_id_or_a_name_else_422_naming_it(api):
    base = {"name": "r", "events": ["approval_requested"]}
    for bad in ("general", "#General", "#has space", "U0LEAD", "C0" + "A" * 40, 7):
        code, body = api.call("POST", "/api/notifications/routes", {**base, "slack_channel": bad})
        assert code == 422 and "slack_channel" in body["error"]["details"], (bad, body)
    for good in ("C0123ABCD", "G0PRIVATE1", "#payments", "#ops_alerts-2"):
        assert (
            api.ok("POST", "/api/notifications/routes", {**base, "slack_channel": good}, status=201)["slack_channel"]
            == good
        )
    route = api.ok(
        "POST", "/api/notifications/routes", {**base, "users": ["admin@test.local"], "slack_channel": "#x"}, status=201
    )
    cleared = api.ok(
        "PUT", f"/api/notifications/routes/{route['id']}", {**base, "users": ["admin@test.local"], "slack_channel": ""}
    )
    assert cleared["slack_channel"] is None
    # a route must still send somewhere
    code, body = api.call("POST", "/api/notifications/routes", base)
    assert code == 422 and "users" in body["error"]["details"]


def test_a_decision_taken_back_in_the_undo_window_puts_the_buttons_back(api, services, slack, lead, configured):
    api.ok("PUT", "/api/workspace/undo", {"window_s": 300})
    approval = waiting_approval(api)
    sender.deliver_due(services)
    [review] = slack_rows(services)
    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})  # held for the window
    sender.deliver_due(services)
    assert buttons(slack.calls("chat.update")[0]["args"]) == []

    lead.ok("POST", f"/api/approvals/{approval['approval_id']}/undo")
    sender.deliver_due(services)
    calls = slack.calls("chat.update")
    assert len(calls) == 2 and (calls[1]["args"]["channel"], calls[1]["args"]["ts"]) == ("C0REVIEWS", review.slack_ts)
    assert buttons(calls[1]["args"]) == [M.APPROVE, M.REJECT, M.OPEN]
    assert api.ok("GET", f"/api/approvals/{approval['approval_id']}")["status"] == "pending"


def test_each_approval_of_a_quorum_shows_on_the_slack_message_with_the_buttons_kept(
    app, api, services, slack, lead, configured
):
    wf = api.workflow([TOTAL, dict(SIGN_OFF, quorum=2), AFTER])
    api.settle(api.start(wf["id"])["execution_id"])
    approval = api.ok("GET", "/api/approvals?status=pending")["items"][0]
    sender.deliver_due(services)
    [review] = slack_rows(services)

    lead.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})
    sender.deliver_due(services)
    [partial] = slack.calls("chat.update")
    assert (partial["args"]["channel"], partial["args"]["ts"]) == ("C0REVIEWS", review.slack_ts)
    assert "Approved so far: 1 of 2 (lead@test.local)" in json.dumps(partial["args"]["blocks"])
    assert buttons(partial["args"]) == [M.APPROVE, M.REJECT, M.OPEN]  # the others can still decide from it

    other = as_user(app, services, "lead2@test.local", "lead")
    other.ok("POST", f"/api/approvals/{approval['approval_id']}", {"decision": "approve"})
    sender.deliver_due(services)
    calls = slack.calls("chat.update")
    assert len(calls) == 2 and buttons(calls[1]["args"]) == []
    assert "*Approved* by lead2@test.local" in json.dumps(calls[1]["args"]["blocks"])
