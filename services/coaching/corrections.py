"""Correction packs: operators' corrections per workflow step, and the rules learned from them."""

from __future__ import annotations

import threading
from typing import Any

from cachetools import LRUCache
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.coaching.corrections import Change, PackStats
from core.coaching.rules import LearnedRule, learned_rules, rule_transitions, track_rules
from core.errors import NotFound, ValidationFailed
from services.audit import service as audit
from services.db import coach_session, row_locks
from services.models.coaching import CorrectionPack
from services.models.workflows import Workflow, WorkflowVersion
from services.orm import in_workspace, table_of, utcnow
from services.unit_of_work import UnitOfWork

EXPORT_FORMAT = "coach.correction-pack/1"
# kept beside the counts in the pack's stats JSON (no column of its own, never exported): when each applying rule
# started applying and what the last start or stop was (core.coaching.corrections.track_rules)
HISTORY = "rule_history"
DISCOUNTED = "discounted"  # beside it too: corrections taken back out because their step then failed


def latest_definition(session: Session, wf: Workflow) -> dict[str, Any]:
    row = session.scalar(
        select(WorkflowVersion).where(
            WorkflowVersion.workflow_id == wf.id, WorkflowVersion.version == wf.current_version
        )
    )
    return row.definition if row else {}


def find(session: Session, workflow_id: str, step_id: str, *, for_update: bool = False) -> CorrectionPack | None:
    query = select(CorrectionPack).where(CorrectionPack.workflow_id == workflow_id, CorrectionPack.step_id == step_id)
    if for_update:  # read again as committed now (another transaction may have changed it), and locked
        query = query.with_for_update().execution_options(populate_existing=True)
    return session.scalar(query)


def _for_change(session: Session, workspace_id: str, workflow_id: str, step_id: str, **new: Any) -> CorrectionPack:
    """The step's pack, made if it has none, locked for this transaction's change: a concurrent change waits, then
    builds on this one's counts (none is lost). Made with INSERT ... ON CONFLICT DO NOTHING, so the first
    corrections of a step arriving together all find the one pack. Under the workspace's lock, taken first as
    every writer of the workspace's shared rows does (services.audit.service.lock_workspace)."""
    audit.lock_workspace(session, workspace_id)
    pack = find(session, workflow_id, step_id, for_update=True)
    if pack is None:
        values = CorrectionPack(workspace_id=workspace_id, workflow_id=workflow_id, step_id=step_id, stats={}, **new)
        table = table_of(CorrectionPack)
        insert = pg_insert if row_locks(session) else sqlite_insert  # (row locks: PostgreSQL)
        session.execute(
            insert(table)
            .values({c.key: getattr(values, c.key) for c in table.columns})
            .on_conflict_do_nothing(index_elements=[table.c.workflow_id, table.c.step_id])
        )
        pack = find(session, workflow_id, step_id, for_update=True)
        if pack is None:  # (inserted, or there already)
            raise LookupError(f"the correction pack of {workflow_id}/{step_id} was not made")
    return pack


# A workflow's learned rules: {step_id: (pack id, rules)} of its enabled packs.
Rules = dict[str, tuple[str, list[LearnedRule]]]


class RulesCache:
    """Each workflow's learned rules, per process, under the workflow's packs_revision as read in the caller's
    transaction. Every pack change bumps that revision in its own transaction (`_changed`), so a process never
    uses rules older than the workflow row it read, whichever process made the change. A transaction that
    changed packs itself reads them from the database and caches nothing (it may still roll back)."""

    def __init__(self, size: int = 1024):
        self.size = size
        self._items: LRUCache[str, tuple[int, Rules]] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def rules(self, session: Session, wf: Workflow) -> Rules:
        if wf.id in coach_session(session).changed_packs:
            return _load_rules(session, wf.id)
        with self._lock:
            hit = self._items.get(wf.id)  # cachetools' LRU: a read counts as a use
            if hit is not None and hit[0] == wf.packs_revision:
                return hit[1]
        rules = _load_rules(session, wf.id)
        with self._lock:
            self._items[wf.id] = (wf.packs_revision, rules)
        return rules


_cache = RulesCache()


def _load_rules(session: Session, workflow_id: str) -> Rules:
    rows = session.execute(
        select(CorrectionPack.id, CorrectionPack.step_id, CorrectionPack.stats).where(
            CorrectionPack.workflow_id == workflow_id, CorrectionPack.enabled.is_(True)
        )
    )
    return {step_id: (pack_id, learned_rules(PackStats.from_dict(stats))) for pack_id, step_id, stats in rows}


def active_rules(session: Session, wf: Workflow, step_id: str) -> tuple[str | None, list[LearnedRule]]:
    """The id of the step's pack and its learned rules, when the pack is enabled (else (None, []))."""
    return _cache.rules(session, wf).get(step_id, (None, []))


def _changed(session: Session, pack: CorrectionPack) -> None:
    """Write the pack now and bump its workflow's packs_revision (updated_at untouched: the workflow itself did
    not change). Always pack row first, then workflow row: one lock order for every pack change."""
    session.flush()
    workflows = table_of(Workflow)
    session.execute(
        update(workflows)
        .where(workflows.c.id == pack.workflow_id)
        .values(packs_revision=workflows.c.packs_revision + 1, updated_at=workflows.c.updated_at)
    )
    coach_session(session).changed_packs.add(pack.workflow_id)


def _applying(pack: CorrectionPack, stats: PackStats | None = None) -> list[LearnedRule]:
    """The rules the pack makes later suggestions apply: none while it is disabled."""
    if not pack.enabled:
        return []
    return learned_rules(stats if stats is not None else PackStats.from_dict(pack.stats))


def _store(pack: CorrectionPack, stats: PackStats, before: list[LearnedRule]) -> dict[str, Any] | None:
    """Write the counts into the pack, keeping its rule history, and note a rule that started or stopped applying.
    Returns that change (None: the same rules apply as before); `_announce` records it once the pack is written."""
    history = (pack.stats or {}).get(HISTORY)
    data = stats.to_dict()
    after = _applying(pack, stats)
    started, stopped = rule_transitions(before, after)
    moved = None
    if started or stopped:
        at = audit.iso(utcnow())
        history = track_rules(history, started, stopped, at)
        moved = {"at": at, "before": before, "after": after, "started": started, "stopped": stopped}
    if history:
        data[HISTORY] = history
    if (pack.stats or {}).get(DISCOUNTED):
        data[DISCOUNTED] = pack.stats[DISCOUNTED]
    pack.stats = data
    return moved


def _announce(uow: UnitOfWork, pack: CorrectionPack, moved: dict[str, Any] | None, actor: str, cause: str) -> None:
    """Audit a learned rule that started or stopped applying, and push it to the workspace (leads watch AUTO runs)."""
    if moved is None:
        return
    dicts = {k: [r.to_dict() for r in moved[k]] for k in ("before", "after", "started", "stopped")}
    recorded = audit.record(
        uow.session,
        pack.workspace_id,
        actor,
        "learned_rule_change",
        target_type="correction_pack",
        target_id=pack.id,
        before={"rules": dicts["before"]},
        after={
            "rules": dicts["after"],
            "started": dicts["started"],
            "stopped": dicts["stopped"],
            "cause": cause,
            "workflow_id": pack.workflow_id,
            "step_id": pack.step_id,
        },
    )
    uow.events.add(
        "correction_pack_changed",
        {
            "pack_id": pack.id,
            "workflow_id": pack.workflow_id,
            "step_id": pack.step_id,
            "enabled": pack.enabled,
            "cause": cause,
            "rules_changed_at": moved["at"],
            "started": dicts["started"],
            "stopped": dicts["stopped"],
            "rules": dicts["after"],
            "audit_seq": recorded.seq,
        },
        workspace=pack.workspace_id,
    )


def record(
    uow: UnitOfWork,
    workspace_id: str,
    workflow_id: str,
    step_id: str,
    before: Any,
    after: Any,
    actor: str = "system",
) -> CorrectionPack:
    """Count one correction (suggested params → corrected params) into the step's pack. The pack's stats are in
    hand already, so whether a rule started or stopped applying costs no read beyond the pack row."""
    session = uow.session
    pack = _for_change(session, workspace_id, workflow_id, step_id)
    stats = PackStats.from_dict(pack.stats)
    rules_before = _applying(pack, stats)
    stats.record_params(before if isinstance(before, dict) else {}, after if isinstance(after, dict) else {})
    moved = _store(pack, stats, rules_before)
    pack.updated_at = utcnow()
    _changed(session, pack)
    _announce(uow, pack, moved, actor, "correction")
    return pack


def get(session: Session, workspace_id: str, pack_id: str) -> CorrectionPack:
    return in_workspace(session, CorrectionPack, workspace_id, pack_id, "correction pack")


def list_packs(session: Session, workspace_id: str, workflow_id: str | None = None) -> list[CorrectionPack]:
    query = select(CorrectionPack).where(CorrectionPack.workspace_id == workspace_id)
    if workflow_id:
        query = query.where(CorrectionPack.workflow_id == workflow_id)
    return list(session.scalars(query.order_by(CorrectionPack.workflow_id, CorrectionPack.step_id)))


def set_enabled(
    uow: UnitOfWork,
    workspace_id: str,
    pack_id: str,
    enabled: bool,
    actor: str = "system",
) -> CorrectionPack:
    session = uow.session
    pack = get(session, workspace_id, pack_id)
    pack = _for_change(session, workspace_id, pack.workflow_id, pack.step_id)  # its counts as committed, locked
    before = pack.enabled
    stats = PackStats.from_dict(pack.stats)
    rules_before = _applying(pack, stats)
    pack.enabled, pack.updated_at = enabled, utcnow()
    moved = _store(pack, stats, rules_before)
    _changed(session, pack)
    audit.record(
        session,
        workspace_id,
        actor,
        "pack_change",
        target_type="correction_pack",
        target_id=pack.id,
        before={"enabled": before},
        after={"enabled": enabled},
    )
    _announce(uow, pack, moved, actor, "enabled" if enabled else "disabled")
    return pack


def view(pack: CorrectionPack) -> dict[str, Any]:
    stats = PackStats.from_dict(pack.stats)
    history = (pack.stats or {}).get(HISTORY) or {}
    since = history.get("since") or {}
    rules = []
    for r in learned_rules(stats):
        # since: when the rule started applying (None: while the pack is disabled, or learned before it was kept)
        rules.append({**r.to_dict(), "since": since.get(r.key()) if pack.enabled else None})
    return {
        "id": pack.id,
        "workflow_id": pack.workflow_id,
        "step_id": pack.step_id,
        "enabled": pack.enabled,
        "corrections": stats.corrections,
        "changes": stats.to_dict()["groups"],
        "field_corrections": stats.field_corrections(),
        "rules": rules,
        "rules_changed_at": history.get("changed_at"),
        "last_rule_change": history.get("last_change"),
        "discounted": int((pack.stats or {}).get(DISCOUNTED) or 0),
        "created_at": pack.created_at,
        "updated_at": pack.updated_at,
    }


def export(pack: CorrectionPack) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "workflow_id": pack.workflow_id,
        "step_id": pack.step_id,
        "enabled": pack.enabled,
        "stats": PackStats.from_dict(pack.stats).to_dict(),
    }


def import_pack(uow: UnitOfWork, workspace_id: str, data: dict[str, Any], actor: str = "system") -> CorrectionPack:
    """Create or replace the pack of (workflow_id, step_id) from an export."""
    session = uow.session
    if data.get("format") != EXPORT_FORMAT:
        raise ValidationFailed("not a correction pack export", details={"format": [f"must be {EXPORT_FORMAT!r}"]})
    wf = session.get(Workflow, str(data.get("workflow_id")))
    if wf is None or wf.workspace_id != workspace_id or wf.deleted_at is not None:
        raise NotFound(f"workflow {data.get('workflow_id')} not found")
    try:
        stats = PackStats.from_dict(data.get("stats"))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValidationFailed("pack stats are invalid", details={"stats": [str(exc)]}) from None
    step_id = str(data.get("step_id") or "")
    if not step_id:
        raise ValidationFailed("step_id is required", details={"step_id": ["is required"]})
    steps = {
        s["id"]
        for s in (latest_definition(session, wf).get("steps") or [])
        if isinstance(s, dict) and isinstance(s.get("id"), str)  # (a definition's steps have ids)
    }
    if step_id not in steps:
        raise ValidationFailed(
            f"workflow {wf.id} has no step {step_id!r}", details={"step_id": [f"must be one of {sorted(steps)}"]}
        )
    pack = _for_change(session, workspace_id, wf.id, step_id, enabled=False)
    rules_before = _applying(pack)
    pack.enabled, pack.updated_at = bool(data.get("enabled", True)), utcnow()
    moved = _store(pack, stats, rules_before)
    _changed(session, pack)
    audit.record(
        session,
        workspace_id,
        actor,
        "pack_import",
        target_type="correction_pack",
        target_id=pack.id,
        after={"workflow_id": wf.id, "step_id": step_id, "corrections": stats.corrections},
    )
    _announce(uow, pack, moved, actor, "import")
    return pack


def discount(
    uow: UnitOfWork,
    workspace_id: str,
    workflow_id: str,
    step_id: str,
    changes: list[Change],
    cause: str,
    actor: str = "system",
) -> CorrectionPack | None:
    """Take one correction back out of its step's pack (its step failed because of it:
    services.coaching.correction_failures), so it counts towards no learned rule. None when the pack no longer holds it
    (imported or edited since)."""
    session = uow.session
    pack = find(session, workflow_id, step_id)
    if pack is None:
        return None
    pack = _for_change(session, workspace_id, workflow_id, step_id)
    stats = PackStats.from_dict(pack.stats)
    rules_before = _applying(pack, stats)
    if not stats.discount(changes):
        return None
    moved = _store(pack, stats, rules_before)
    _count_discounted(pack)
    pack.updated_at = utcnow()
    _changed(session, pack)
    _announce(uow, pack, moved, actor, cause)
    return pack


def _count_discounted(pack: CorrectionPack) -> None:
    data = dict(pack.stats or {})
    data[DISCOUNTED] = int(data.get(DISCOUNTED) or 0) + 1
    pack.stats = data


def remove_change(
    uow: UnitOfWork,
    workspace_id: str,
    pack_id: str,
    change: dict[str, Any],
    actor: str = "system",
) -> CorrectionPack:
    """A lead drops one change (field, before → after) that was wrong from a pack: it counts towards no rule any
    more. Audited (`pack_change_remove`, with the change and its count); NotFound when the pack has no such change."""
    session = uow.session
    pack = get(session, workspace_id, pack_id)
    pack = _for_change(session, workspace_id, pack.workflow_id, pack.step_id)
    stats = PackStats.from_dict(pack.stats)
    rules_before = _applying(pack, stats)
    try:
        wanted = Change.from_dict(change)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationFailed("not a change", details={"field": [str(exc)]}) from None
    removed = stats.remove(wanted)
    if removed is None:
        raise NotFound(
            f"correction pack {pack_id} has no change of {wanted.field!r} from {change.get('before')!r} "
            f"to {change.get('after')!r}",
            details={"field": wanted.field},
        )
    moved = _store(pack, stats, rules_before)
    pack.updated_at = utcnow()
    _changed(session, pack)
    audit.record(
        session,
        workspace_id,
        actor,
        "pack_change_remove",
        target_type="correction_pack",
        target_id=pack.id,
        before={"change": removed.to_dict()},
        after={"workflow_id": pack.workflow_id, "step_id": pack.step_id, "corrections": stats.corrections},
    )
    _announce(uow, pack, moved, actor, "change_removed")
    return pack
