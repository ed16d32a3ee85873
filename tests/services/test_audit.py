"""The audit chain in services/audit/service.py on a migrated database (SQLite, and PostgreSQL when it answers):
appending, verifying, catching edits and deletions with the seq they happened at, filters, JSONL export."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select, update

from services.audit import service as audit
from services.db import Database
from services.models.audit import AuditEvent
from services.models.users import Workspace

N = 6


@pytest.fixture
def db(database_url):
    db = Database(database_url)
    with db.transaction() as s:
        s.add_all([Workspace(id="ws1", slug="one", name="One"), Workspace(id="ws2", slug="two", name="Two")])
    yield db
    db.dispose()


def _fill(db, workspace_id: str = "ws1", n: int = N) -> None:
    with db.transaction() as s:
        for i in range(1, n + 1):
            audit.record(
                s,
                workspace_id,
                f"user{i % 2}@x",
                "decision" if i % 3 else "promotion",
                target_type="suggestion",
                target_id=f"s{i}",
                execution_id=f"ex{i % 2}",
                before={"mode": "coaching", "n": i},
                after={"mode": "auto", "at": datetime(2024, 1, i)},
                result="ok" if i != 4 else "refused",
            )


def _tamper(db, statement) -> None:
    """A raw write straight to the table (SQLAlchemy Core: no ORM, no hashing)."""
    with db.transaction() as s:
        s.execute(statement)


def _verify(db, workspace_id: str = "ws1") -> dict:
    with db.transaction() as s:
        return audit.verify(s, workspace_id)


def _where(seq: int, workspace_id: str = "ws1"):
    return (AuditEvent.workspace_id == workspace_id) & (AuditEvent.seq == seq)


def test_hash_is_sha256_of_prev_hash_and_canonical_json():
    fields = {"b": 1, "a": "é", "c": None}
    assert audit.canonical_json(fields) == '{"a":"é","b":1,"c":null}'
    import hashlib

    assert (
        audit.compute_hash("0" * 64, fields)
        == hashlib.sha256(("0" * 64 + '{"a":"é","b":1,"c":null}').encode()).hexdigest()
    )
    assert audit.plain({"t": datetime(2024, 1, 2, tzinfo=UTC), 3: -0.0, "big": 1e20, "x": 0.5}) == {
        "t": "2024-01-02T00:00:00+00:00",
        "3": 0.0,
        "big": 10**20,
        "x": 0.5,
    }


def test_empty_chain_verifies(db):
    assert _verify(db) == {"ok": True, "checked": 0}


def test_chain_links_and_verifies(db):
    _fill(db)
    with db.transaction() as s:
        rows = list(s.scalars(select(AuditEvent).where(AuditEvent.workspace_id == "ws1").order_by(AuditEvent.seq)))
    assert [r.seq for r in rows] == list(range(1, N + 1))
    assert rows[0].prev_hash == audit.GENESIS
    assert all(b.prev_hash == a.hash for a, b in zip(rows, rows[1:], strict=False))
    assert rows[0].after == {"mode": "auto", "at": "2024-01-01T00:00:00+00:00"}  # stored JSON-safe
    assert _verify(db) == {"ok": True, "checked": N}


def test_events_of_one_transaction_and_of_later_ones_chain(db):
    _fill(db, n=2)
    with db.transaction() as s:
        event = audit.record(s, "ws1", "a@x", "login", target_type="user")
        assert (event.seq, event.target_id, event.result) == (3, None, "ok")
    assert _verify(db) == {"ok": True, "checked": 3}


def test_a_rolled_back_event_leaves_no_trace(db):
    _fill(db, n=2)
    with pytest.raises(RuntimeError):
        with db.transaction() as s:
            audit.record(s, "ws1", "a@x", "cancel", target_type="execution")
            raise RuntimeError("the caller's work failed")
    _fill(db, n=1)
    assert _verify(db) == {"ok": True, "checked": 3}


EDITS = {
    "actor": "mallory@x",
    "action": "login",
    "target_type": "workflow",
    "target_id": "other",
    "execution_id": None,
    "before": {"mode": "auto", "n": 3},
    "after": None,
    "result": "failed",
    "created_at": datetime(2020, 1, 1, tzinfo=UTC),
    "hash": "f" * 64,
}


@pytest.mark.parametrize("field", sorted(EDITS))
def test_an_edited_field_is_caught_at_its_seq(db, field):
    _fill(db)
    _tamper(db, update(AuditEvent).where(_where(3)).values({field: EDITS[field]}))
    report = _verify(db)
    assert report["ok"] is False and report["first_bad_seq"] == 3 and report["checked"] == 2
    assert "edited" in report["reason"]


def test_an_edit_with_a_recomputed_hash_breaks_the_next_link(db):
    _fill(db)
    with db.transaction() as s:
        row = s.scalar(select(AuditEvent).where(_where(3)))
        row.actor = "mallory@x"
        row.hash = audit.compute_hash(row.prev_hash, audit.fields_of(row))
    report = _verify(db)
    assert (report["ok"], report["first_bad_seq"], report["checked"]) == (False, 4, 3)
    assert "broken link" in report["reason"]


def test_an_edited_prev_hash_is_a_broken_link(db):
    _fill(db)
    _tamper(db, update(AuditEvent).where(_where(2)).values(prev_hash="0" * 64))
    report = _verify(db)
    assert (report["ok"], report["first_bad_seq"], report["checked"]) == (False, 2, 1)
    assert "broken link" in report["reason"]


def test_an_edited_seq_shows_as_a_gap(db):
    _fill(db)
    _tamper(db, update(AuditEvent).where(_where(3)).values(seq=100))
    report = _verify(db)
    assert (report["ok"], report["first_bad_seq"], report["checked"]) == (False, 3, 2)


def test_a_deleted_middle_row_is_a_gap(db):
    _fill(db)
    _tamper(db, delete(AuditEvent).where(_where(3)))
    report = _verify(db)
    assert (report["ok"], report["first_bad_seq"], report["checked"]) == (False, 3, 2)
    assert "gap in seq" in report["reason"] and "seq 3" in report["reason"]


def test_several_deleted_rows_are_named(db):
    _fill(db)
    _tamper(db, delete(AuditEvent).where(_where(3) | _where(4)))
    report = _verify(db)
    assert (report["first_bad_seq"], report["checked"]) == (3, 2)
    assert "seq 3 to 4" in report["reason"]


def test_a_deleted_first_row_is_caught(db):
    _fill(db)
    _tamper(db, delete(AuditEvent).where(_where(1)))
    report = _verify(db)
    assert (report["ok"], report["first_bad_seq"], report["checked"]) == (False, 1, 0)


def test_limitation_deleting_the_newest_rows_is_not_visible_to_the_chain_alone(db):
    """What remains is a whole chain: only a head kept elsewhere (last seq and hash) shows the truncation."""
    _fill(db)
    with db.transaction() as s:
        head = audit.last_event(s, "ws1")
        kept = (head.seq, head.hash)
    _tamper(db, delete(AuditEvent).where(_where(N)))
    assert _verify(db) == {"ok": True, "checked": N - 1}
    with db.transaction() as s:
        head = audit.last_event(s, "ws1")
        assert (head.seq, head.hash) != kept  # what an outside copy of the head would catch
        # the next event continues from the truncated chain, which still verifies
        assert audit.record(s, "ws1", "a@x", "login", target_type="user").seq == N
    assert _verify(db) == {"ok": True, "checked": N}


def test_workspaces_have_independent_chains(db):
    _fill(db, "ws1", 4)
    _fill(db, "ws2", 3)
    _fill(db, "ws1", 1)
    with db.transaction() as s:
        assert audit.last_event(s, "ws1").seq == 5 and audit.last_event(s, "ws2").seq == 3
        first2 = s.scalar(select(AuditEvent).where(_where(1, "ws2")))
        assert first2.prev_hash == audit.GENESIS
    assert _verify(db, "ws1") == {"ok": True, "checked": 5}
    assert _verify(db, "ws2") == {"ok": True, "checked": 3}
    _tamper(db, delete(AuditEvent).where(_where(2, "ws2")))
    assert _verify(db, "ws1") == {"ok": True, "checked": 5}
    assert _verify(db, "ws2")["first_bad_seq"] == 2


def test_jsonl_lines_parse_in_seq_order(db):
    _fill(db, "ws1", N)
    _fill(db, "ws2", 2)
    with db.transaction() as s:
        lines = list(audit.iter_jsonl(s, "ws1"))
        filtered = [json.loads(line) for line in audit.iter_jsonl(s, "ws1", actor="user1@x")]
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    events = [json.loads(line) for line in lines]
    assert [e["seq"] for e in events] == list(range(1, N + 1))
    assert {e["workspace_id"] for e in events} == {"ws1"}
    assert events[1]["after"] == {"mode": "auto", "at": "2024-01-02T00:00:00+00:00"}
    assert events[1]["prev_hash"] == events[0]["hash"]
    assert [e["seq"] for e in filtered] == [1, 3, 5]


def test_list_page_filters_and_pages_newest_first(db):
    _fill(db, "ws1", N)
    _fill(db, "ws2", 2)
    with db.transaction() as s:
        rows, total = audit.list_page(s, "ws1")
        assert total == N and [r.seq for r in rows] == list(range(N, 0, -1))
        rows, total = audit.list_page(s, "ws1", page=2, per_page=4)
        assert total == N and [r.seq for r in rows] == [2, 1]
        assert [r.seq for r in audit.list_page(s, "ws1", execution_id="ex0")[0]] == [6, 4, 2]
        assert [r.seq for r in audit.list_page(s, "ws1", actor="user1@x")[0]] == [5, 3, 1]
        assert [r.seq for r in audit.list_page(s, "ws1", action="promotion")[0]] == [6, 3]
        rows, total = audit.list_page(s, "ws1", action="promotion", actor="user1@x")
        assert ([r.seq for r in rows], total) == ([3], 1)
        assert audit.list_page(s, "ws1", actor="nobody") == ([], 0)
        s.execute(
            update(AuditEvent).where(AuditEvent.seq <= 2).values(created_at=datetime.now(UTC) - timedelta(days=2))
        )
    # `since` holds the rows written since a moment (the edit above also breaks the chain, as it should)
    with db.transaction() as s:
        since = datetime.now(UTC) - timedelta(days=1)
        rows, total = audit.list_page(s, "ws1", since=since)
        assert total == N - 2 and min(r.seq for r in rows) == 3
        naive = since.replace(tzinfo=None)  # a naive moment is read as UTC
        assert audit.list_page(s, "ws1", since=naive)[1] == N - 2
        assert [json.loads(line)["seq"] for line in audit.iter_jsonl(s, "ws1", since=since)] == [3, 4, 5, 6]


def test_view_is_json_ready(db):
    _fill(db, n=1)
    with db.transaction() as s:
        data = audit.view(audit.last_event(s, "ws1"))
    assert json.loads(json.dumps(data)) == data
    assert set(data) >= {
        "seq",
        "actor",
        "action",
        "target_type",
        "target_id",
        "execution_id",
        "before",
        "after",
        "result",
        "created_at",
        "prev_hash",
        "hash",
    }
    assert data["created_at"].endswith("+00:00")


def test_values_are_stored_as_they_were_hashed(db):
    """Odd values (NUL, -0.0, huge floats, tuples, non-string keys, overlong strings) survive the round trip through
    either database unchanged, so a fresh chain never reports itself edited."""
    with db.transaction() as s:
        audit.record(
            s,
            "ws1",
            "x" * 500,
            "a" * 80,
            target_type="t\x00t",
            target_id="y" * 300,
            before={"nul": "a\x00b", "neg0": -0.0, "big": 1.5e20, "tiny": 1e-7, "t": (1, 2), 5: "five"},
            after=[1.0, 2, "é", None, True],
            result="r" * 90,
        )
    assert _verify(db) == {"ok": True, "checked": 1}
    with db.transaction() as s:
        row = audit.last_event(s, "ws1")
        assert len(row.actor) == 200 and len(row.action) == 40 and row.target_type == "t\ufffdt"
        assert row.before["5"] == "five" and row.before["big"] == 150000000000000000000


def test_concurrent_writers_make_one_whole_chain(db):
    """Writers in parallel transactions never reuse a seq, even on an empty chain (PostgreSQL: a per-workspace
    advisory lock; SQLite: one writer at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    def write(worker: int) -> None:
        for i in range(8):
            with db.transaction() as s:
                audit.record(s, "ws1", f"w{worker}", "decision", target_type="suggestion", target_id=str(i))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))
    assert _verify(db) == {"ok": True, "checked": 32}


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, 9.9e-05, 0.0001, 1e16, 1.5e300, 5e-324, -2.5e-10, 123456.789]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_json_values)
def test_canonical_json_is_the_text_every_chain_was_hashed_with(value):
    """orjson makes the text where it can: it must be the standard library's, character for character."""
    reference = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
    assert audit.canonical_json(value) == reference(value)
