"""/api/audit through the app: pages and filters, JSON lines, the chain check and tampering, and who may read."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, update
from sqlalchemy.engine import make_url

from services.audit import service as audit
from services.models.audit import AuditEvent
from services.users import service as users
from tests.conftest import make_user

pytestmark = pytest.mark.shared_app  # an app per module and database (tests/conftest.py SharedApps)


@pytest.fixture
def ws(services) -> str:
    """The default workspace (the admin's), holding six events of this test's own."""
    with services.db.transaction() as session:
        ws_id = users.find_workspace(session, "default").id
        for i in range(1, 7):
            audit.record(
                session,
                ws_id,
                f"lead{i % 2}@test.local",
                "decision" if i % 3 else "pack_change",
                target_type="suggestion",
                target_id=f"s{i}",
                execution_id=f"ex{i % 2}",
                before={"n": i},
                after={"n": i + 1, "at": datetime(2024, 1, i, tzinfo=UTC)},
            )
    return ws_id


def _mine(items: list[dict]) -> list[dict]:
    """Events this module wrote (the app may audit its own work too, e.g. logins)."""
    return [e for e in items if e["target_type"] == "suggestion"]


def _tamper(services, statement) -> None:
    with services.db.transaction() as session:
        session.execute(statement)


def test_list_is_paginated_newest_first(api, ws):
    body = api.ok("GET", "/api/audit")
    assert set(body) >= {"items", "total", "page", "per_page"} and body["page"] == 1 and body["per_page"] == 50
    seqs = [e["seq"] for e in body["items"]]
    assert seqs == sorted(seqs, reverse=True) and body["total"] >= 6
    first = _mine(body["items"])[-1]
    assert first["after"] == {"n": 2, "at": "2024-01-01T00:00:00+00:00"} and first["workspace_id"] == ws
    assert set(first) >= {
        "actor",
        "action",
        "target_id",
        "execution_id",
        "before",
        "result",
        "created_at",
        "prev_hash",
        "hash",
    }
    page = api.ok("GET", "/api/audit?page=2&per_page=2")
    assert [e["seq"] for e in page["items"]] == seqs[2:4] and page["total"] == body["total"]


def test_actions_lists_what_the_filter_can_ask_for(api, ws):
    assert api.ok("GET", "/api/audit/actions")["actions"] == list(audit.ACTIONS)
    assert {"decision", "promotion", "login"} <= set(audit.ACTIONS)


def test_filters(api, ws):
    def seqs(query: str) -> list[int]:
        return [e["target_id"] for e in api.ok("GET", f"/api/audit?{query}")["items"]]

    assert seqs("execution_id=ex0") == ["s6", "s4", "s2"]
    assert seqs("user=lead1@test.local") == ["s5", "s3", "s1"]
    assert seqs("action=pack_change") == ["s6", "s3"]
    assert seqs("action=pack_change&user=lead1@test.local") == ["s3"]
    assert seqs("user=nobody@test.local") == []
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert seqs(f"since={later}") == []
    assert len(_mine(api.ok("GET", "/api/audit?since=2000-01-01T00:00:00Z")["items"])) == 6
    code, body = api.call("GET", "/api/audit?since=yesterday")
    assert code == 422 and "since" in json.dumps(body)
    assert api.call("GET", "/api/audit?per_page=500")[0] == 422
    assert api.call("GET", "/api/audit?format=xml")[0] == 422


def test_jsonl_streams_every_event_oldest_first(api, ws):
    response = api.client.get("/api/audit?format=jsonl&per_page=1")
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = response.get_data(as_text=True).splitlines()
    events = [json.loads(line) for line in lines]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and seqs == list(range(1, len(seqs) + 1))  # the whole chain, per_page ignored
    assert len(_mine(events)) == 6
    assert all(b["prev_hash"] == a["hash"] for a, b in zip(events, events[1:], strict=False))
    filtered = api.client.get("/api/audit?format=jsonl&execution_id=ex1").get_data(as_text=True).splitlines()
    assert [json.loads(line)["target_id"] for line in filtered] == ["s1", "s3", "s5"]


def test_a_jsonl_download_under_way_holds_no_write_lock(api, services, ws):
    """The download reads in db.read(): while its body is being sent, SQLite's write lock stays free for others."""
    if not services.db.is_sqlite:
        pytest.skip("SQLite's write lock (PostgreSQL has no database-wide one)")
    response = api.client.get("/api/audit?format=jsonl", buffered=False)
    body = response.iter_encoded()
    try:
        first = json.loads(next(body))  # the stream's session is open, between two lines
        writer = sqlite3.connect(make_url(services.db.url).database, timeout=2, isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")  # "database is locked" after 2 s while a write transaction is open
            writer.execute("ROLLBACK")
        finally:
            writer.close()
        assert first["seq"] == 1
    finally:
        response.close()


def test_verify_ok_then_tampering_is_reported(api, services, ws):
    report = api.ok("GET", "/api/audit/verify")
    assert report["ok"] is True and report["checked"] >= 6
    total = report["checked"]
    target = api.ok("GET", "/api/audit?action=pack_change&user=lead1@test.local")["items"][0]["seq"]
    _tamper(
        services,
        update(AuditEvent).where(AuditEvent.workspace_id == ws, AuditEvent.seq == target).values(result="denied"),
    )
    report = api.ok("GET", "/api/audit/verify")
    assert report == {"ok": False, "checked": target - 1, "first_bad_seq": target, "reason": report["reason"]}
    assert "edited" in report["reason"]
    _tamper(services, delete(AuditEvent).where(AuditEvent.workspace_id == ws, AuditEvent.seq == target))
    report = api.ok("GET", "/api/audit/verify")
    assert (report["ok"], report["first_bad_seq"]) == (False, target) and "gap" in report["reason"]
    assert total > target


def test_the_log_is_for_leads_and_up_of_the_workspace(api, services, ws):
    lead = make_user(services, "lead@test.local", "lead")
    operator = make_user(services, "op@test.local", "operator")
    assert api.call("GET", "/api/audit", headers={"Authorization": f"Bearer {lead}"})[0] == 200
    assert api.call("GET", "/api/audit/verify", headers={"Authorization": f"Bearer {lead}"})[0] == 200
    for path in ("/api/audit", "/api/audit?format=jsonl", "/api/audit/verify"):
        code, body = api.call("GET", path, headers={"Authorization": f"Bearer {operator}"})
        assert code == 403 and body["error"]["code"] == "forbidden"
    anonymous = api.client.application.test_client()
    for path in ("/api/audit", "/api/audit?format=jsonl", "/api/audit/verify"):
        assert anonymous.get(path).status_code == 401
    # another workspace sees its own (empty) chain, not this one
    other = make_user(services, "other@test.local", "admin", workspace_slug="other")
    headers = {"Authorization": f"Bearer {other}", "X-Coach-Workspace": "other"}
    assert _mine(api.ok("GET", "/api/audit", headers=headers)["items"]) == []
    assert api.ok("GET", "/api/audit/verify", headers=headers)["ok"] is True


def test_a_member_target_is_named_by_email_on_the_page(api, services, ws):
    """Issue #40 item 17: an event about a member (disabled, role changed) names them by id, a hashed field; the page
    says who that is. Another workspace's user id is not resolved (nothing of theirs shows)."""
    make_user(services, "named@test.local", "operator")
    member = next(u for u in api.ok("GET", "/api/users")["items"] if u["email"] == "named@test.local")
    api.ok("POST", f"/api/users/{member['id']}/disable")
    with services.db.transaction() as session:
        stranger = users.create_user(session, "stranger@test.local", "x" * 12)
        audit.record(session, ws, "x@test.local", "user_change", target_type="user", target_id=stranger.id)
    items = api.ok("GET", "/api/audit?per_page=5")["items"]
    disabled = next(e for e in items if e["action"] == "member_disable")
    assert (disabled["target_id"], disabled["target_label"]) == (member["id"], "named@test.local")
    foreign = next(e for e in items if e["action"] == "user_change")
    assert foreign["target_label"] is None
    assert all(e["target_label"] is None for e in items if e["target_type"] != "user")
