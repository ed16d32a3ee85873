"""Correction packs per gateway tool: the reviewers' edits of an agent's arguments, grouped by what they changed, and
the rules learned from them (the steps' machinery: core/coaching/corrections.py and core/coaching/rules.py, at its
defaults: a change made at least 3 times and in at least 80% of the edits of its field). A pack is made disabled; once
a lead enables it (accepts its learned rules), a held call of the tool shows the corrected arguments as the suggested
edit, and a call forwarded in AUTO is forwarded with them, the change stated in the result the agent receives
(services/gateway/calls.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.coaching.corrections import PackStats
from core.coaching.rules import LearnedRule, apply_rules, learned_rules
from core.errors import NotFound
from services.audit import service as audit
from services.models.gateway import GatewayCorrectionPack
from services.orm import table_of, utcnow


def _find(session: Session, workspace_id: str, tool: str, *, for_update: bool = False) -> GatewayCorrectionPack | None:
    query = select(GatewayCorrectionPack).where(
        GatewayCorrectionPack.workspace_id == workspace_id, GatewayCorrectionPack.tool == tool
    )
    if for_update:
        query = query.with_for_update().execution_options(populate_existing=True)
    return session.scalar(query)


def _for_change(session: Session, workspace_id: str, tool: str) -> GatewayCorrectionPack:
    """The tool's pack, made (disabled) if it has none, locked for this change, under the workspace's lock (taken
    first, as every writer of the workspace's shared rows does)."""
    audit.lock_workspace(session, workspace_id)
    pack = _find(session, workspace_id, tool, for_update=True)
    if pack is None:
        made = GatewayCorrectionPack(workspace_id=workspace_id, tool=tool, enabled=False, stats={})
        table = table_of(GatewayCorrectionPack)
        insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
        session.execute(
            insert(table)
            .values({c.key: getattr(made, c.key) for c in table.columns})
            .on_conflict_do_nothing(index_elements=[table.c.workspace_id, table.c.tool])
        )
        pack = _find(session, workspace_id, tool, for_update=True)
        if pack is None:  # (inserted, or by a concurrent change under the same lock: there is one now)
            raise RuntimeError(f"the correction pack of {tool!r} could not be made")
    return pack


def record(session: Session, workspace_id: str, tool: str, before: Any, after: Any) -> None:
    """One reviewer's edit (the agent's arguments → the forwarded ones) counted into the tool's pack."""
    pack = _for_change(session, workspace_id, tool)
    stats = PackStats.from_dict(pack.stats)
    stats.record_params(before if isinstance(before, dict) else {}, after if isinstance(after, dict) else {})
    pack.stats, pack.updated_at = stats.to_dict(), utcnow()


def rules(session: Session, workspace_id: str, tool: str) -> tuple[str | None, list[LearnedRule]]:
    """The pack's id and its learned rules while a lead has it enabled (else (None, []))."""
    row = session.execute(
        select(GatewayCorrectionPack.id, GatewayCorrectionPack.stats).where(
            GatewayCorrectionPack.workspace_id == workspace_id,
            GatewayCorrectionPack.tool == tool,
            GatewayCorrectionPack.enabled.is_(True),
        )
    ).first()
    if row is None:
        return None, []
    return row.id, learned_rules(PackStats.from_dict(row.stats))


def suggest(session: Session, workspace_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments as the tool's enabled learned rules correct them, with the rules that changed them; None when no
    rule changes these arguments."""
    pack_id, found = rules(session, workspace_id, tool)
    if not found:
        return None
    corrected, applied = apply_rules(arguments, found)
    if not applied:
        return None
    return {"pack_id": pack_id, "params": corrected, "rules": [r.to_dict() for r in applied]}


def set_enabled(session: Session, workspace_id: str, tool: str, enabled: bool, actor: str) -> dict[str, Any]:
    """A lead accepts the pack's learned rules (enabled) or stops them; audited. 404 for a tool without edits."""
    audit.lock_workspace(session, workspace_id)
    pack = _find(session, workspace_id, tool, for_update=True)
    if pack is None:
        raise NotFound(
            f"no reviewer has edited a call of {tool!r}: it has no correction pack", details={"tool": [tool]}
        )
    before = pack.enabled
    if before != enabled:
        pack.enabled, pack.updated_at = enabled, utcnow()
        audit.record(
            session,
            workspace_id,
            actor,
            "gateway_pack_change",
            target_type="gateway_correction_pack",
            target_id=pack.id,
            before={"enabled": before},
            after={
                "enabled": enabled,
                "tool": tool,
                "rules": [r.to_dict() for r in learned_rules(PackStats.from_dict(pack.stats))],
            },
        )
    return view(pack)


def view(pack: GatewayCorrectionPack) -> dict[str, Any]:
    stats = PackStats.from_dict(pack.stats)
    return {
        "pack_id": pack.id,
        "tool": pack.tool,
        "enabled": pack.enabled,
        "corrections": stats.corrections,
        "changes": stats.to_dict()["groups"],
        "rules": [r.to_dict() for r in learned_rules(stats)],
    }


def views(session: Session, workspace_id: str) -> dict[str, dict[str, Any]]:
    return {
        pack.tool: view(pack)
        for pack in session.scalars(
            select(GatewayCorrectionPack).where(GatewayCorrectionPack.workspace_id == workspace_id)
        )
    }
