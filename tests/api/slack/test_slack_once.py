"""A review posted to Slack once (issue 33, "none sent twice"): a sender that dies after Slack answered its
chat.postMessage but before it stored the answer leaves its outbox row `sending`; the row is claimed again when its
lease runs out, and the next sender finds the message the first one posted (its metadata names the row) in the
channel's history instead of posting it a second time. Against the real slack_sdk WebClient and a scripted Slack API
on loopback."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from core import notifications as N
from services.models.notifications import OutboxRow
from services.notifications import sender
from services.notifications import slack as slack_channel
from services.orm import utcnow
from services.slack import client as slack_client
from tests.api.slack.test_slack import (
    SECRET,
    TOKEN,
    as_user,
    waiting_approval,
)


def slack_rows(services) -> list[OutboxRow]:
    with services.db.read() as session:
        return session.query(OutboxRow).filter(OutboxRow.channel == N.SLACK).order_by(OutboxRow.created_at).all()


def post_then_die(services, owner: str = "dying-sender") -> OutboxRow:
    """What a sender killed between Slack's answer and its own record does: claims the row, posts, stores nothing."""
    [row_id] = sender.claim(services, owner, utcnow())
    with services.db.read() as session:
        prepared = slack_channel.prepare(session, services.settings, session.get(OutboxRow, row_id))
    slack_channel.send(services.settings, prepared)
    [row] = [r for r in slack_rows(services) if r.id == row_id]
    assert (row.status, row.attempts, row.slack_ts) == (N.SENDING, 1, None)
    return row


def lease_runs_out(services, row: OutboxRow) -> None:
    with services.db.transaction() as session:
        session.execute(
            update(OutboxRow).where(OutboxRow.id == row.id).values(lease_until=utcnow() - timedelta(seconds=1))
        )


def test_a_review_posted_by_a_sender_that_died_is_found_not_posted_again(api, services, slack, configured):
    waiting_approval(api)
    row = post_then_die(services)
    [first] = slack.calls("chat.postMessage")
    assert first["args"]["metadata"] == {"event_type": slack_client.REVIEW_EVENT, "event_payload": {"row": row.id}}

    lease_runs_out(services, row)
    assert sender.deliver_due(services) == {N.SENT: 1}

    assert len(slack.calls("chat.postMessage")) == 1  # not posted twice
    [looked] = slack.calls("conversations.history")
    assert looked["args"]["channel"] == "C0REVIEWS"
    [review] = slack_rows(services)
    posted = slack.posted["C0REVIEWS"][0]
    assert (review.status, review.attempts, review.slack_channel, review.slack_ts) == (
        N.SENT,
        2,
        "C0REVIEWS",
        posted["ts"],
    )  # the message the first sender posted: a later update replaces it


def test_a_direct_message_posted_before_the_sender_died_is_found_in_the_dm(app, api, services, slack):
    api.ok("PUT", "/api/workspace/slack", {"bot_token": TOKEN, "signing_secret": SECRET})
    lead = as_user(app, services, "lead@test.local", "lead")
    lead.ok("PUT", "/api/workspace/slack/me", {"slack_user_id": "U0LEAD"})
    waiting_approval(api)
    row = post_then_die(services)

    lease_runs_out(services, row)
    sender.deliver_due(services)

    assert [c["args"]["channel"] for c in slack.calls("chat.postMessage")] == ["D0LEAD"]
    assert [c["args"]["channel"] for c in slack.calls("conversations.history")] == ["D0LEAD"]
    [review] = slack_rows(services)
    assert (review.status, review.slack_channel, review.slack_ts) == (N.SENT, "D0LEAD", slack.posted["D0LEAD"][0]["ts"])


def test_a_row_whose_first_try_failed_looks_then_posts_once(api, services, slack, configured):
    waiting_approval(api)
    slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=1)
    sender.deliver_due(services)
    [row] = slack_rows(services)
    assert (row.status, row.attempts) == (N.PENDING, 1) and slack.calls("conversations.history") == []

    with services.db.transaction() as session:  # its retry is due
        session.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(next_attempt_at=utcnow()))
    sender.deliver_due(services)

    assert len(slack.calls("conversations.history")) == 1  # nothing of this row there: posted now
    assert len(slack.posted["C0REVIEWS"]) == 1
    [row] = slack_rows(services)
    assert (row.status, row.attempts, row.slack_ts) == (N.SENT, 2, slack.posted["C0REVIEWS"][0]["ts"])


def test_without_the_history_scope_the_row_is_posted_again_rather_than_lost(api, services, slack, configured):
    waiting_approval(api)
    row = post_then_die(services)
    lease_runs_out(services, row)
    slack.fail("conversations.history", "missing_scope")

    assert sender.deliver_due(services) == {N.SENT: 1}

    assert len(slack.posted["C0REVIEWS"]) == 2  # at least once: the review is never lost for a scope
    [review] = slack_rows(services)
    assert review.slack_ts == slack.posted["C0REVIEWS"][1]["ts"]
