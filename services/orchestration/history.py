"""A run's history (GET /api/executions/<id>/history): the rows that hold it, read in a few SELECTs by the
execution's id, handed to core/execution/history.py as plain dicts. Any member of the workspace may read it (the
audit log as a whole is the lead's; these are one execution's own events)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.execution import history as H
from services.executions import service as executions
from services.models.approvals import Approval
from services.models.audit import AuditEvent
from services.models.coaching import Decision, Suggestion
from services.triggers import starts
from services.workflows.service import DefinitionCache

# what the audit log adds to the rows of suggestions, decisions and approvals (those are read from their own tables)
AUDITED = (
    "pause",
    "resume",
    "step_correction",
    "policy_deny",
    "policy_review",
    "gate_timeout",
    "tool_call",
    "retry",
    "resume_from",
    "execution_start",
    "cancel",
    "rerun",
    "answer",
)
MAX_EVENTS = 5000  # of each source: a run of thousands of steps still answers in one page


def _columns(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in names}


def history(session: Session, definitions: DefinitionCache, workspace_id: str, execution_id: str) -> dict[str, Any]:
    ex = executions.get(session, workspace_id, execution_id)
    defn = definitions.for_execution(session, ex)
    suggestions = [
        _columns(s, ("id", "step_id", "params", "rationale", "source", "status", "purpose", "created_at", "decided_at"))
        for s in session.scalars(
            select(Suggestion)
            .where(Suggestion.execution_id == ex.id)
            .order_by(Suggestion.created_at, Suggestion.id)
            .limit(MAX_EVENTS)
        )
    ]
    decisions = {}
    if suggestions:
        ids = [s["id"] for s in suggestions]
        for chunk in range(0, len(ids), 500):
            for d in session.scalars(select(Decision).where(Decision.suggestion_id.in_(ids[chunk : chunk + 500]))):
                decisions[d.suggestion_id] = _columns(
                    d, ("decision", "correction", "manual_output", "feedback", "operator", "created_at")
                )
    approvals = [
        _columns(a, ("id", "step_id", "kind", "status", "message", "params", "quorum", "decisions", "created_at"))
        for a in session.scalars(
            select(Approval)
            .where(Approval.execution_id == ex.id)
            .order_by(Approval.created_at, Approval.id)
            .limit(MAX_EVENTS)
        )
    ]
    audit = [
        _columns(e, ("action", "actor", "target_type", "target_id", "before", "after", "result", "created_at"))
        for e in session.scalars(
            select(AuditEvent)
            .where(
                AuditEvent.workspace_id == workspace_id,
                AuditEvent.execution_id == ex.id,
                AuditEvent.action.in_(AUDITED),
            )
            .order_by(AuditEvent.seq)
            .limit(MAX_EVENTS)
        )
    ]
    trigger = starts.of_execution(session, ex.id)
    if trigger is not None and trigger.get("name"):  # "Started by webhook 'shop'", not by webhook:<its id>
        started_by = f"{trigger['kind']}:{trigger.get('hook_id') or trigger.get('schedule_id')}"
        named = f"{trigger['kind']} {trigger['name']!r}"
        audit = [{**row, "actor": named} if row["actor"] == started_by else row for row in audit]
    steps = []
    for sid in defn.step_ids:
        st = ex.steps.get(sid)
        if st is None:
            continue
        step = defn.step(sid)
        steps.append(
            {
                "step_id": sid,
                "name": step.name or sid,
                "type": step.type,
                "tool": step.tool,
                "status": st.status,
                "error": st.error,
                "output": st.output,
                "run": st.run,
                "attempts": st.attempts,
                "started_at": st.started_at,
                "finished_at": st.finished_at,
            }
        )
    per_step, wide = H.build(steps, suggestions, decisions, approvals, audit)
    control = ex.control or {}
    retried = [r for r in control.get("retries") or [] if r.get("kind") == "retry"]
    for step_view in per_step:
        step_view.pop("output", None)
        step_view["retries"] = sum(1 for r in retried if r.get("step_id") == step_view["step_id"])
    return {
        "execution_id": ex.id,
        "status": ex.status,
        "error": ex.error,
        "rerun_of": control.get("rerun_of"),
        "reruns": list(control.get("reruns") or []),
        "steps": per_step,
        "events": wide,
    }
