"""core/notifications: routing, default recipients, preferences, quiet hours, the retry schedule, signatures and
action-link tokens, and when a link may decide. No app, no database."""

from __future__ import annotations

from datetime import UTC, datetime

from core import notifications as N

MEMBERS = [N.Member("u1", "op@x", "operator"), N.Member("u2", "lead@x", "lead"), N.Member("u3", "admin@x", "admin")]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_an_approval_goes_by_default_to_those_who_may_decide_it():
    facts = N.Facts(N.APPROVAL_REQUESTED, "ws", approvers={"roles": ["lead"], "users": []})
    assert N.default_recipients(facts, MEMBERS) == ["u2", "u3"]
    named = N.Facts(N.APPROVAL_REQUESTED, "ws", approvers={"roles": [], "users": ["OP@x"]})
    assert N.default_recipients(named, MEMBERS) == ["u1"]


def test_a_failure_goes_to_whoever_started_the_run_and_a_demotion_to_leads():
    assert N.default_recipients(N.Facts(N.RUN_FAILED, "ws", started_by="u1"), MEMBERS) == ["u1"]
    assert N.default_recipients(N.Facts(N.DEMOTION, "ws"), MEMBERS) == ["u2", "u3"]


def test_a_route_matches_by_event_workflow_and_tool_glob():
    facts = N.Facts(N.REVIEW_HELD, "ws", workflow_id="wf1", tool="sql.query")
    assert N.route_matches({"events": [N.REVIEW_HELD], "tool": "sql.*"}, facts)
    assert not N.route_matches({"events": [N.APPROVAL_REQUESTED]}, facts)
    assert not N.route_matches({"workflow_id": "wf2"}, facts)
    assert not N.route_matches({"tool": "http.*"}, facts)
    assert N.matching_routes([{"enabled": False}, {"id": "r"}], facts) == [{"id": "r"}]


def test_email_preferences_default_to_everything_but_suggestions():
    assert N.wants_email(None, N.APPROVAL_REQUESTED) and not N.wants_email(None, N.SUGGESTION_WAITING)
    assert N.wants_email({"kinds": {N.SUGGESTION_WAITING: True}}, N.SUGGESTION_WAITING)
    assert not N.wants_email({"kinds": {N.RUN_FAILED: False}}, N.RUN_FAILED)
    assert not N.wants_email({"email": False}, N.APPROVAL_REQUESTED)


def test_quiet_hours_across_midnight_in_the_persons_time_zone():
    # 22:00-07:00 in Berlin (UTC+1 in winter): 23:30 UTC is 00:30 there, quiet until 07:00 Berlin = 06:00 UTC
    assert N.quiet_until(at("2026-01-10T23:30:00"), "22:00", "07:00", "Europe/Berlin") == at("2026-01-11T06:00:00")
    assert N.quiet_until(at("2026-01-10T12:00:00"), "22:00", "07:00", "Europe/Berlin") is None
    # 21:30 UTC is 22:30 in Berlin: quiet until the next morning
    assert N.quiet_until(at("2026-01-10T21:30:00"), "22:00", "07:00", "Europe/Berlin") == at("2026-01-11T06:00:00")
    assert N.quiet_until(at("2026-01-10T12:30:00"), "12:00", "13:00", "UTC") == at("2026-01-10T13:00:00")
    assert N.quiet_until(at("2026-01-10T12:30:00"), None, None, "UTC") is None


def test_the_retry_schedule_doubles_up_to_an_hour_and_stops():
    delays = [N.retry_delay(n) for n in range(1, N.MAX_ATTEMPTS + 1)]
    assert delays[:3] == [30.0, 60.0, 120.0]
    assert all(d <= N.RETRY_MAX_S for d in delays[:-1]) and delays[-2] == N.RETRY_MAX_S
    assert delays[-1] is None


def test_a_webhook_signature_verifies_only_with_its_secret_and_body():
    header = N.signature("s3cret", b'{"a":1}')
    assert header.startswith("sha256=") and N.verify_signature("s3cret", b'{"a":1}', header)
    assert not N.verify_signature("other", b'{"a":1}', header)
    assert not N.verify_signature("s3cret", b'{"a":2}', header) and not N.verify_signature("s3cret", b"", None)


def test_a_link_token_opens_only_with_the_servers_key_and_unchanged():
    token = N.seal_link(b"k" * 32, "link1", "approve")
    assert N.open_link(b"k" * 32, token) == ("link1", "approve")
    assert N.open_link(b"x" * 32, token) is None
    payload, mac = token.split(".")
    other = N.seal_link(b"k" * 32, "link1", "reject").split(".")[0]
    assert N.open_link(b"k" * 32, f"{other}.{mac}") is None
    assert N.open_link(b"k" * 32, "garbage") is None


def test_a_link_is_refused_once_used_expired_or_decided():
    now = at("2026-01-10T12:00:00")
    later = at("2026-01-11T12:00:00")
    assert N.link_refusal(None, later, now, "pending") is None
    assert "used" in N.link_refusal(now, later, now, "pending")
    assert "expired" in N.link_refusal(None, now, now, "pending")
    assert "elsewhere" in N.link_refusal(None, later, now, "approved")


def test_destructive_or_large_reviews_are_not_decided_from_a_link():
    assert N.link_decides("destructive", None, {}, None) == "the tool is destructive"
    assert N.link_decides(None, {"risk": "destructive"}, {}, None) == "the tool is destructive"
    assert N.link_decides("write", None, {"payment": {"amount": 5000}}, 1000.0) == "the amount 5000 is above 1000"
    assert N.link_decides("write", None, {"amount": 500}, 1000.0) is None
    assert N.link_decides("external", None, {"amount": 5000}, None) is None
