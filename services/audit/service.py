"""The audit log: append-only, hash-chained per workspace (docs/auth.md, "Audit").

Each event's `hash` is sha256(prev_hash + canonical JSON of its fields), and `prev_hash` is the hash of the
workspace's previous event (64 zeros for the first); `seq` counts 1, 2, 3 … per workspace. `verify` replays the
chain and names the first edited row (hash mismatch), deleted row (gap in seq) or broken link.

What a chain alone cannot show: deleting the newest events (the chain that remains is whole), or rewriting every
hash from some point on. Keep the head (`last_seq`, `hash` of the newest event) somewhere else to catch those.
The surrogate `id` is not hashed: it only orders rows for the database, `seq` is the event's place in the chain.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from services.db import row_locks
from services.models.audit import AuditEvent
from services.notifier import jsonable, jsonable_exact
from services.orm import utcnow
from services.unit_of_work import UnitOfWork

GENESIS = "0" * 64
# every action `record` is called with (GET /api/audit/actions, the audit filter, docs/auth.md "Audit"):
# tests/services/test_audit_actions.py reads every `audit.record(` call of the code and fails on one not listed here
ACTIONS = (
    "login",
    "login_failed",
    "decision",
    "correction",
    "promotion",
    "demotion",
    "pause",
    "resume",
    "cancel",
    "pack_change",
    "pack_import",
    "thresholds_change",
    "workflow_create",
    "workflow_update",
    "workflow_delete",
    "token_create",
    "token_revoke",
    "user_change",
    "outbound_change",
    "logout",
    "invitation_create",
    "invitation_accept",
    "invitation_decline",
    "invitation_cancel",
    "member_remove",
    "member_disable",
    "member_enable",
    "member_tokens_revoke",
    "learned_rule_change",
    "step_promotion",
    "step_demotion",
    "step_pin",
    "approval_decision",
    "approval_timeout",
    "approval_expire",
    "policy_create",
    "policy_update",
    "policy_delete",
    "policy_default_change",
    "policy_deny",
    "policy_review",
    "plan_create",
    "plan_approve",
    "plan_execute",
    "plan_save",
    "step_correction",
    "gate_timeout",
    "execution_start",
    "tool_call",
    "tool_server_create",
    "tool_server_update",
    "tool_server_delete",
    "tool_server_refresh",
    "retry",
    "resume_from",
    "rerun",
    "answer",
    "agent_create",
    "agent_revoke",
    "gateway_call",
    "pack_change_remove",
    "correction_failed",
    "execution_triggered",
    "hook_create",
    "hook_revoke",
    "schedule_create",
    "schedule_update",
    "schedule_delete",
    "gateway_promotion",
    "gateway_demotion",
    "gateway_pin",
    "gateway_pack_change",
    "attentive_floor",
    "region_create",
    "region_update",
    "region_delete",
    "region_mode",
    "region_demotion",
    "gateway_builtins",
    "gateway_confirm",
    "llm_provider_change",
    "agent_answer",
    "undo_window",
    "decision_undo",
    "decision_release",
    "notification_route_create",
    "notification_route_update",
    "notification_route_delete",
    "webhook_endpoint_create",
    "webhook_endpoint_update",
    "webhook_endpoint_delete",
    "slack_settings_change",
    "slack_user_id_change",
    "review_settings",
    "check_result",
)
HASHED = (
    "workspace_id",
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
)
STREAM_BATCH = 500


# -- the pure part: canonical form and hash -----------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, characters as they are: the standard library's text (what every chain was hashed
    with), made by orjson where its text is the same, which is everywhere but some floats: orjson writes 9.9e-05 as
    0.000099, so text with an exponent or a number below 1e-4 is made again by the standard library (as is
    anything orjson declines: a lone surrogate, an integer beyond 64 bits)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return _canonical(value)
    return _canonical(value) if _FLOAT_SPELLING.search(text) or _FLOAT_FIRST.match(text) else text


# one encoder: json.dumps with options makes a new one per call
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
# a number with an exponent, or below 1e-4 (a string holding such text matches too: then the slower way, same text).
# A number token follows `:`, `,` or `[`, or is the whole text: the search, anchored on those characters, skips
# ahead to them instead of trying a number at every position.
_FLOAT_TOKEN = r"-?(?:\d+(?:\.\d+)?[eE]|0\.0000)"
_FLOAT_SPELLING = re.compile(r"[:,\[]" + _FLOAT_TOKEN)
_FLOAT_FIRST = re.compile(_FLOAT_TOKEN)


def iso(moment: datetime) -> str:
    """One spelling of an instant on every backend (PostgreSQL may answer in the session's time zone)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


def _text(value: Any, limit: int) -> str:
    # PostgreSQL refuses NUL in text; a longer value than the column holds would fail the caller's transaction
    return str(value).replace("\x00", "\ufffd")[:limit]


def plain(value: Any) -> Any:
    """The JSON value both databases store and give back unchanged, so that a stored row hashes as it did when
    it was written: datetimes as ISO strings, string keys, no NUL, and floats as PostgreSQL's jsonb returns them
    (it has no -0.0 and spells 1e+20 as an integer). Anything else JSON cannot hold becomes its str()."""
    return _plain(jsonable_exact(value))


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return _text(value, 10**9) if "\x00" in value else value
    if value is None or kind is bool or kind is int:
        return value
    if isinstance(value, dict):
        return {_text(k, 10**9): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return _text(value, 10**9)
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == 0:
            return 0.0
        if "e+" in repr(value):
            return int(Decimal(repr(value)))
        return value
    return _text(value, 10**9)


def fields_of(event: AuditEvent) -> dict[str, Any]:
    """The hashed content of an event, in JSON terms."""
    return _hashed({name: getattr(event, name) for name in HASHED})


def _hashed(values: dict[str, Any]) -> dict[str, Any]:
    data = {name: values[name] for name in HASHED}
    data["created_at"] = iso(values["created_at"])
    return data


def compute_hash(prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical_json(fields)).encode("utf-8")).hexdigest()


# -- writing ------------------------------------------------------------------------------------------------------


def lock_workspace(session: Session, workspace_id: str) -> None:
    """PostgreSQL: take the workspace's lock (a transaction-scoped advisory lock), held until the transaction ends;
    once per unit of work (its `locked_workspaces`). It is the audit chain's lock (one writer per chain: locking the
    last row alone would not do, an empty chain has no row to lock and a waiter would reuse the same seq), and the
    first lock of every transaction that writes the workspace's shared rows: its metric rows
    (services.metrics.service), its correction packs and the packs_revision of their workflows
    (services.coaching.corrections). Those rows are only ever locked under it, so transactions cannot lock them in
    different orders and deadlock; they were serial per workspace already, on the audit chain and the global metric
    row. The one row a transaction may lock before it is its own execution's (executions.get_any,
    get_with_suggestion).
    SQLite needs nothing: its write transactions start with BEGIN IMMEDIATE, one writer at a time."""
    if not row_locks(session):
        return
    uow = UnitOfWork.of(session)  # (a session outside any unit of work remembers nothing: it locks each time)
    if uow is not None and workspace_id in uow.locked_workspaces:
        return
    digest = hashlib.sha256(f"coach.audit:{workspace_id}".encode()).digest()
    session.execute(select(func.pg_advisory_xact_lock(int.from_bytes(digest[:8], "big", signed=True))))
    if uow is not None:
        uow.locked_workspaces.add(workspace_id)


def last_event(session: Session, workspace_id: str) -> AuditEvent | None:
    """The workspace's newest event."""
    return session.scalar(
        select(AuditEvent).where(AuditEvent.workspace_id == workspace_id).order_by(AuditEvent.seq.desc()).limit(1)
    )


def record(
    session: Session,
    workspace_id: str,
    actor: str,
    action: str,
    *,
    target_type: str,
    target_id: str | None = None,
    execution_id: str | None = None,
    before: Any = None,
    after: Any = None,
    result: str = "ok",
) -> AuditEvent:
    """Append one event to the workspace's chain in the caller's transaction (it commits or rolls back with it)."""
    last = _head(session, workspace_id)
    event = AuditEvent(
        workspace_id=workspace_id,
        seq=(last[0] + 1) if last else 1,
        actor=_text(actor or "anonymous", 200),
        action=_text(action, 40),
        target_type=_text(target_type, 40),
        target_id=None if target_id is None else _text(target_id, 200),
        execution_id=None if execution_id is None else _text(execution_id, 32),
        before=plain(before),
        after=plain(after),
        result=_text(result, 40),
        created_at=utcnow(),
        prev_hash=last[1] if last else GENESIS,
    )
    event.hash = compute_hash(event.prev_hash, fields_of(event))
    session.add(event)
    return event


def _head(session: Session, workspace_id: str) -> tuple[int, str] | None:
    """(seq, hash) of the workspace's newest event: one this transaction added and has not written yet, else the
    newest row (under the workspace's lock, so no other transaction appends meanwhile)."""
    added = [e for e in session.new if type(e) is AuditEvent and e.workspace_id == workspace_id]
    if added:
        newest = max(added, key=lambda e: e.seq)
        return newest.seq, newest.hash
    lock_workspace(session, workspace_id)
    found = session.execute(_HEAD_LOCKED if row_locks(session) else _HEAD, {"workspace_id": workspace_id}).first()
    return (found[0], found[1]) if found else None


_HEAD = (
    select(AuditEvent.seq, AuditEvent.hash)
    .where(AuditEvent.workspace_id == bindparam("workspace_id"))
    .order_by(AuditEvent.seq.desc())
    .limit(1)
)
_HEAD_LOCKED = _HEAD.with_for_update()


# -- checking -----------------------------------------------------------------------------------------------------


def verify(session: Session, workspace_id: str) -> dict[str, Any]:
    """Replay the workspace's chain, oldest first, streamed; the first problem found is reported."""
    columns = [getattr(AuditEvent, name) for name in HASHED] + [AuditEvent.prev_hash, AuditEvent.hash]
    rows = session.execute(
        select(*columns)
        .where(AuditEvent.workspace_id == workspace_id)
        .order_by(AuditEvent.seq)
        .execution_options(yield_per=STREAM_BATCH)
    )
    checked, previous = 0, GENESIS
    for row in rows:
        expected = checked + 1
        if row.seq != expected:
            missing = f"seq {expected}" if row.seq == expected + 1 else f"seq {expected} to {row.seq - 1}"
            reason = (
                f"deleted: {missing} missing (gap in seq)"
                if row.seq > expected
                else f"seq {row.seq} found where seq {expected} was expected"
            )
            return _bad(rows, checked, expected, reason)
        if row.prev_hash != previous:
            return _bad(
                rows,
                checked,
                row.seq,
                f"broken link: prev_hash of seq {row.seq} is not the hash of "
                f"{'seq ' + str(row.seq - 1) if row.seq > 1 else 'the chain start'}",
            )
        data = {name: getattr(row, name) for name in HASHED}
        data["created_at"] = iso(row.created_at)
        if compute_hash(row.prev_hash, data) != row.hash:
            return _bad(rows, checked, row.seq, f"edited: the content of seq {row.seq} does not match its hash")
        checked, previous = checked + 1, row.hash
    return {"ok": True, "checked": checked}


def _bad(rows, checked: int, seq: int, reason: str) -> dict[str, Any]:
    rows.close()  # stop the server-side cursor before the transaction goes on
    return {"ok": False, "checked": checked, "first_bad_seq": seq, "reason": reason}


# -- reading ------------------------------------------------------------------------------------------------------


def _filtered(
    workspace_id: str,
    *,
    execution_id: str | None = None,
    actor: str | None = None,
    action: str | None = None,
    since: datetime | None = None,
):
    query = select(AuditEvent).where(AuditEvent.workspace_id == workspace_id)
    if execution_id:
        query = query.where(AuditEvent.execution_id == execution_id)
    if actor:
        query = query.where(AuditEvent.actor == actor)
    if action:
        query = query.where(AuditEvent.action == action)
    if since is not None:
        query = query.where(AuditEvent.created_at >= (since if since.tzinfo else since.replace(tzinfo=UTC)))
    return query


def list_page(
    session: Session,
    workspace_id: str,
    *,
    execution_id: str | None = None,
    actor: str | None = None,
    action: str | None = None,
    since: datetime | None = None,
    page: int = 1,
    per_page: int = 50,
) -> tuple[list[AuditEvent], int]:
    """One page of events, newest first, and how many match in all."""
    query = _filtered(workspace_id, execution_id=execution_id, actor=actor, action=action, since=since)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(AuditEvent.seq.desc()).offset((page - 1) * per_page).limit(per_page))
    return list(rows), total


def view(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "workspace_id": event.workspace_id,
        "seq": event.seq,
        "actor": event.actor,
        "action": event.action,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "execution_id": event.execution_id,
        "before": event.before,
        "after": event.after,
        "result": event.result,
        "created_at": iso(event.created_at),
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }


def iter_jsonl(session: Session, workspace_id: str, **filters: Any) -> Iterator[str]:
    """The matching events as JSON lines, oldest first, streamed from the database."""
    query = _filtered(workspace_id, **filters).order_by(AuditEvent.seq).execution_options(yield_per=STREAM_BATCH)
    for event in session.scalars(query):
        yield json.dumps(jsonable(view(event)), ensure_ascii=False, separators=(",", ":")) + "\n"
