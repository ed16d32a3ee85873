"""An approval's deadline and its end by a cancel. Deadlines are rows, not timers: a pending approval with a
deadline has `due_at`, the runner's deadline scanner (services.orchestration.runner.Runner.fire_due, every
COACH_APPROVAL_SCAN_S seconds and at start-up) fires the due ones.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import approvals as A
from core.errors import NotFound
from services.approvals import service as approvals
from services.audit import service as audit
from services.db import row_locks
from services.decisions import approvals as approval_decisions
from services.models.approvals import Approval
from services.models.executions import Execution
from services.unit_of_work import UnitOfWork


def due(session: Session, now: datetime, limit: int = 100) -> list[str]:
    """Ids of pending approvals whose deadline has passed, oldest deadline first (index ix_approvals_due)."""
    return list(
        session.scalars(select(Approval.id).where(Approval.due_at <= now).order_by(Approval.due_at).limit(limit))
    )


def fire_timeout(uow: UnitOfWork, approval_id: str, now: datetime) -> Execution | None:
    """Fire one approval's deadline, once: under the locks it is fired only if still pending and due (a
    concurrent decision, cancel or scanner got there first otherwise). Returns its execution when it fired."""
    session = uow.session
    try:
        ex, a = approvals.locked(session, None, approval_id)
    except NotFound:
        return None
    if ex is None or a is None or not A.is_due(a.status, a.due_at, now):
        return None
    approvals.store(a, A.time_out(approvals.state_of(a), now, a.timeout_s))
    audit.record(
        session,
        a.workspace_id,
        A.SYSTEM,
        "approval_timeout",
        target_type="approval",
        target_id=a.id,
        execution_id=ex.id,
        before={"status": A.PENDING, "deadline": a.deadline},
        after={"status": a.status, "on_timeout": a.on_timeout},
        result=a.status,
    )
    approval_decisions.settle(uow, ex, a)
    return ex


def expire_for_execution(uow: UnitOfWork, ex: Execution, actor: str, reason: str) -> int:
    """The execution ended another way (cancelled): its pending approvals expire with it, so no queue keeps them.
    In the caller's transaction, which holds the execution's lock."""
    session = uow.session
    query = select(Approval).where(Approval.execution_id == ex.id, Approval.status == A.PENDING)
    rows = session.scalars(query.with_for_update() if row_locks(session) else query).all()
    for a in rows:
        approvals.expire(uow, a, actor, reason)
    return len(rows)
