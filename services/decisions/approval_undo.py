"""Releasing and taking back a held approval decision (services/approvals/held.py holds it)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core import approvals as A
from core.errors import Conflict, Forbidden
from services.approvals import held
from services.approvals import service as approvals
from services.audit import service as audit
from services.decisions import approvals as approval_decisions
from services.executions import service as executions
from services.models.approvals import Approval
from services.models.executions import Execution
from services.notifications import slack_updates
from services.notifier import jsonable
from services.orm import utcnow
from services.unit_of_work import UnitOfWork


def release(uow: UnitOfWork, ex: Execution, now: datetime) -> None:
    """The window ended: the approval settles its execution (the step runs, or is rejected) and is counted."""
    session = uow.session
    gate = ex.gate or {}
    a = session.get(Approval, gate.get("approval_id"), populate_existing=True)
    if a is None or a.status not in A.FINAL:  # nothing is held any more (cannot happen under the lock)
        ex.gate = gate.get("reopen")
        return
    approval_decisions.settle_counted(uow, ex, a, now)
    audit.record(
        session,
        ex.workspace_id,
        A.SYSTEM,
        "decision_release",
        target_type="approval",
        target_id=a.id,
        execution_id=ex.id,
        before={"decision": gate.get("decision"), "operator": gate.get("operator"), "held_until": gate.get("deadline")},
        after={"status": ex.status},
        result=a.status,
    )


def undo(uow: UnitOfWork, workspace_id: str, approval_id: str, actor: str) -> dict[str, Any]:
    """Take back the held decision on `approval_id`: it is pending again, as it was. 409 once it settled its
    execution (the step may have started) or when it holds nothing; 403 for someone other than who decided."""
    session = uow.session
    ex, a = approvals.locked(session, workspace_id, approval_id)
    held_here = ex is not None and held.held_approval(ex) == a.id
    if ex is None or ex.gate is None or not held_here:  # (held: there is an execution and its gate)
        if a.status == A.PENDING:
            raise Conflict(
                "this approval has no decision to take back",
                code="nothing_to_undo",
                details={"approval_status": a.status},
            )
        raise Conflict(
            "the step already started: its approval can no longer be taken back",
            code="step_started",
            details={"approval_status": a.status},
        )
    gate = ex.gate
    if gate.get("operator") != actor:
        raise Forbidden(f"only {gate.get('operator')} can take their decision back")
    a.status, a.decided_at = A.PENDING, None
    a.decisions = list(a.decisions or [])[:-1]
    if gate.get("decision") == "edit":
        a.params = gate.get("params_before")
    a.due_at = a.deadline if a.deadline is None or a.deadline > utcnow() else utcnow()
    ex.gate = gate.get("reopen")
    slack_updates.approval_changed(a)  # its Slack messages get their buttons back
    audit.record(
        session,
        workspace_id,
        actor,
        "decision_undo",
        target_type="approval",
        target_id=a.id,
        execution_id=ex.id,
        before={"decision": gate.get("decision"), "held_until": gate.get("deadline")},
        after={"status": A.PENDING},
        result="undone",
    )
    uow.events.add(
        "decision_undone",
        {
            "execution_id": ex.id,
            "approval_id": a.id,
            "step_id": a.step_id,
            "decision": gate.get("decision"),
            "by": actor,
        },
        execution=ex.id,
        workspace=ex.workspace_id,
    )
    uow.events.add("approval_requested", approvals.view(a), workspace=ex.workspace_id)
    executions.changed(uow, ex, a.step_id)
    update = executions.update_event(ex, a.step_id, steps=False)
    update["gate"] = ex.gate
    return {"approval": approvals.view(a), "execution": jsonable(update)}


def submit(services, workspace_id: str, approval_id: str, actor: str) -> dict[str, Any]:
    with services.command() as uow:
        return undo(uow, workspace_id, approval_id, actor)
