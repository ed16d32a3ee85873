"""The dashboard's notices: a workspace's recent demotions and learned-rule changes, read back from the audit log
(the same news is pushed live as `workflow_level_changed` and `correction_pack_changed`, each with the `audit_seq`
of its event, so that a client can tell a pushed notice from one it reads here)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.audit import service as audit
from services.models.audit import AuditEvent
from services.models.workflows import Workflow
from services.orm import utcnow

KINDS = ("demotion", "step_demotion", "learned_rule_change", "gateway_demotion")
# Notices are looked for among the newest events of the log only: a bounded range of the (workspace_id, seq)
# index, however long the log (each decision is an event, and notices are rare among them).
WINDOW_EVENTS = 10_000
MAX_AGE = timedelta(days=7)


def recent(session: Session, workspace_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """The newest notices of the workspace (at most `limit`, from the last week), newest first."""
    head = session.scalar(select(func.max(AuditEvent.seq)).where(AuditEvent.workspace_id == workspace_id)) or 0
    rows = list(
        session.scalars(
            select(AuditEvent)
            .where(
                AuditEvent.workspace_id == workspace_id,
                AuditEvent.seq > head - WINDOW_EVENTS,
                AuditEvent.action.in_(KINDS),
                AuditEvent.created_at >= utcnow() - MAX_AGE,
            )
            .order_by(AuditEvent.seq.desc())
            .limit(limit)
        )
    )
    notices = [_notice(row) for row in rows]
    ids = {n["workflow_id"] for n in notices if n["workflow_id"]}
    names = (
        {
            row.id: row.name
            for row in session.execute(
                select(Workflow.id, Workflow.name).where(Workflow.workspace_id == workspace_id, Workflow.id.in_(ids))
            )
        }
        if ids
        else {}
    )
    for notice in notices:
        notice["workflow_name"] = names.get(notice["workflow_id"])
    return notices


def _notice(event: AuditEvent) -> dict[str, Any]:
    after = event.after if isinstance(event.after, dict) else {}
    notice: dict[str, Any] = {
        "id": event.seq,
        "kind": event.action,
        "at": audit.iso(event.created_at),
        "actor": event.actor,
        "workflow_id": None,
        "step_id": None,
        "reason": None,
    }
    if event.action == "learned_rule_change":
        notice.update(
            workflow_id=after.get("workflow_id"),
            step_id=after.get("step_id"),
            pack_id=event.target_id,
            cause=after.get("cause"),
            started=_rules(after.get("started")),
            stopped=_rules(after.get("stopped")),
        )
        return notice
    if event.action == "gateway_demotion":  # an MCP gateway tool (or a tool for one agent) back in coaching
        notice.update(
            tool=after.get("tool"),
            agent=after.get("agent"),
            spot_check_rate=after.get("spot_check_rate"),
            reason=after.get("reason") or f"set to coaching by {event.actor}",
        )
        return notice
    workflow_id, _, step_id = (event.target_id or "").partition("/")
    forced = " (forced)" if after.get("forced") else ""
    # a demotion by spot checks keeps its reason; a lead's says who
    reason = after.get("reason") or (
        f"step set to coaching by {event.actor}{forced}" if step_id else f"demoted by {event.actor}{forced}"
    )
    notice.update(
        workflow_id=workflow_id or None,
        step_id=step_id or None,
        reason=reason,
        spot_check_rate=after.get("spot_check_rate"),
    )
    return notice


def _rules(value: Any) -> list[dict[str, Any]]:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []
