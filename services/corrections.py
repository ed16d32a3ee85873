"""Correction packs: operators' corrections per workflow step, and the rules learned from them."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.coaching.corrections import LearnedRule, PackStats, learned_rules
from core.errors import NotFound, ValidationFailed
from services import audit
from services.models import CorrectionPack, Workflow, WorkflowVersion, utcnow

EXPORT_FORMAT = "coach.correction-pack/1"


def latest_definition(session: Session, wf: Workflow) -> dict[str, Any]:
    row = session.scalar(select(WorkflowVersion).where(WorkflowVersion.workflow_id == wf.id,
                                                        WorkflowVersion.version == wf.current_version))
    return row.definition if row else {}


def find(session: Session, workflow_id: str, step_id: str) -> CorrectionPack | None:
    return session.scalar(select(CorrectionPack).where(CorrectionPack.workflow_id == workflow_id,
                                                       CorrectionPack.step_id == step_id))


def active_rules(session: Session, workflow_id: str, step_id: str) -> tuple[CorrectionPack | None, list[LearnedRule]]:
    pack = find(session, workflow_id, step_id)
    if pack is None or not pack.enabled:
        return pack, []
    return pack, learned_rules(PackStats.from_dict(pack.stats))


def record(session: Session, workspace_id: str, workflow_id: str, step_id: str, before: Any, after: Any) -> CorrectionPack:
    """Count one correction (suggested params → corrected params) into the step's pack."""
    pack = find(session, workflow_id, step_id)
    if pack is None:
        pack = CorrectionPack(workspace_id=workspace_id, workflow_id=workflow_id, step_id=step_id, stats={})
        session.add(pack)
    stats = PackStats.from_dict(pack.stats)
    stats.record_params(before if isinstance(before, dict) else {}, after if isinstance(after, dict) else {})
    pack.stats, pack.updated_at = stats.to_dict(), utcnow()
    session.flush()
    return pack


def get(session: Session, workspace_id: str, pack_id: str) -> CorrectionPack:
    pack = session.get(CorrectionPack, pack_id)
    if pack is None or pack.workspace_id != workspace_id:
        raise NotFound(f"correction pack {pack_id} not found")
    return pack


def list_packs(session: Session, workspace_id: str, workflow_id: str | None = None) -> list[CorrectionPack]:
    query = select(CorrectionPack).where(CorrectionPack.workspace_id == workspace_id)
    if workflow_id:
        query = query.where(CorrectionPack.workflow_id == workflow_id)
    return list(session.scalars(query.order_by(CorrectionPack.workflow_id, CorrectionPack.step_id)))


def set_enabled(session: Session, workspace_id: str, pack_id: str, enabled: bool,
                actor: str = "system") -> CorrectionPack:
    pack = get(session, workspace_id, pack_id)
    audit.record(session, workspace_id, actor, "pack_change", target_type="correction_pack", target_id=pack.id,
                 before={"enabled": pack.enabled}, after={"enabled": enabled})
    pack.enabled, pack.updated_at = enabled, utcnow()
    return pack


def view(pack: CorrectionPack) -> dict[str, Any]:
    stats = PackStats.from_dict(pack.stats)
    return {
        "id": pack.id, "workflow_id": pack.workflow_id, "step_id": pack.step_id, "enabled": pack.enabled,
        "corrections": stats.corrections, "changes": stats.to_dict()["groups"],
        "rules": [r.to_dict() for r in learned_rules(stats)], "created_at": pack.created_at,
        "updated_at": pack.updated_at,
    }


def export(pack: CorrectionPack) -> dict[str, Any]:
    return {"format": EXPORT_FORMAT, "workflow_id": pack.workflow_id, "step_id": pack.step_id,
            "enabled": pack.enabled, "stats": PackStats.from_dict(pack.stats).to_dict()}


def import_pack(session: Session, workspace_id: str, data: dict[str, Any], actor: str = "system") -> CorrectionPack:
    """Create or replace the pack of (workflow_id, step_id) from an export."""
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
    steps = {s.get("id") for s in (latest_definition(session, wf).get("steps") or []) if isinstance(s, dict)}
    if step_id not in steps:
        raise ValidationFailed(f"workflow {wf.id} has no step {step_id!r}",
                               details={"step_id": [f"must be one of {sorted(steps)}"]})
    pack = find(session, wf.id, step_id)
    if pack is None:
        pack = CorrectionPack(workspace_id=workspace_id, workflow_id=wf.id, step_id=step_id)
        session.add(pack)
    pack.stats, pack.enabled, pack.updated_at = stats.to_dict(), bool(data.get("enabled", True)), utcnow()
    session.flush()
    audit.record(session, workspace_id, actor, "pack_import", target_type="correction_pack", target_id=pack.id,
                 after={"workflow_id": wf.id, "step_id": step_id, "corrections": stats.corrections})
    return pack
