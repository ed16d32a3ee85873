"""Approvals: storage around core/approvals (the rules live there): opening them, reading them, and their rows as
core/approvals' state. Decisions are services/decisions/approvals.py, deadlines and cancels
services/decisions/deadlines.py, the undo window services/approvals/held.py and undo.py.

Two kinds are opened here, and decided, timed out and expired the same way:
- `step`: an `approval` step of a definition (`open_step`, called by the runner at the step's gate);
- `tool_call`: a review a policy forces before an action step's tool runs (`open_tool_call`). Approved, the step
  runs with the approval's params (an `edit` replaces them: schema-checked, and re-evaluated by the `recheck`
  hook when one is set); rejected, the tool never runs.

Every function runs in the caller's transaction; the events it adds are pushed once that commits. Locks are
taken in one order everywhere (the execution's row, then the approval's), so a decision, a timeout and a cancel
of the same execution take turns, and only the first of them finds the approval pending.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core import approvals as A
from core.errors import NotFound
from core.execution import states as S
from core.execution.engine import template_context
from core.templating import render_value
from core.workflow import StepDef, WorkflowDef
from services.audit import service as audit
from services.db import row_locks
from services.executions import service as executions
from services.models.approvals import Approval
from services.models.executions import Execution
from services.notifications import outbox as notification_outbox
from services.notifications import slack_updates
from services.notifier import jsonable
from services.orm import in_workspace, utcnow
from services.unit_of_work import UnitOfWork

# -- opening ------------------------------------------------------------------------------------------------------


def open_step(uow: UnitOfWork, ex: Execution, defn: WorkflowDef, step: StepDef) -> Approval:
    """An `approval` step's gate: the step waits, the execution waits for approval, the approval is asked for.
    Raises TemplateFailure when the message cannot be rendered (the runner fails the step with it)."""
    spec = step.approval or A.ApprovalSpec()
    message = spec.message
    if message:
        rendered = render_value(message, template_context(executions.to_state(ex)), f"steps.{step.id}.message")
        message = rendered if isinstance(rendered, str) else str(jsonable(rendered))
    return _open(uow, ex, step.id, "step", spec, message or f"Approve step {step.name or step.id}?")


def open_tool_call(
    uow: UnitOfWork,
    ex: Execution,
    step_id: str,
    tool: str,
    params: dict,
    policy: dict | None,
    *,
    spec: A.ApprovalSpec | None = None,
    message: str | None = None,
) -> Approval:
    """A policy-forced review of an action step's tool call, in the caller's transaction (the runner's, where
    the policy said `require_review`). The step waits; approved, it runs with `approval.params` (its step state
    gets decision approve or edit and those params, so the gate must not fire again for a step whose `decision`
    is set); rejected, it never runs and the execution fails. `spec` says who approves (default: one lead)."""
    spec = spec or A.ApprovalSpec()
    reason = ((policy or {}).get("rule") or {}).get("reason") if isinstance(policy, dict) else None
    text = message or spec.message or f"Review the call of {tool}" + (f": {reason}" if reason else "")
    return _open(uow, ex, step_id, "tool_call", spec, text, tool=tool, params=params, policy=policy)


def open_agent(uow: UnitOfWork, ex: Execution, step_id: str, message: str) -> Approval:
    """An agent step's REQUEST_APPROVAL (services.agents.service): approved, the agent is told and goes on; rejected,
    the step is rejected and the execution fails, as an approval step's. Who approves: one lead (the default spec)."""
    approval = _open(uow, ex, step_id, "step", A.ApprovalSpec(), message[:10_000] or "The agent asks for approval.")
    ex.gate = {**(ex.gate or {}), "agent": True}  # (_open set it)
    return approval


def _open(
    uow: UnitOfWork,
    ex: Execution,
    step_id: str,
    kind: str,
    spec: A.ApprovalSpec,
    message: str,
    *,
    tool: str | None = None,
    params: Any = None,
    policy: dict | None = None,
) -> Approval:
    now = utcnow()
    deadline = now + timedelta(seconds=spec.timeout_s) if spec.timeout_s else None
    approval = Approval(
        workspace_id=ex.workspace_id,
        execution_id=ex.id,
        step_id=step_id,
        kind=kind,
        status=A.PENDING,
        message=message,
        tool=tool,
        params=params,
        policy=jsonable(policy),
        approvers=spec.approvers,
        quorum=spec.quorum,
        separate_duties=spec.separate_duties,
        started_by=ex.started_by,
        decisions=[],
        replies={},
        timeout_s=spec.timeout_s,
        on_timeout=spec.on_timeout,
        deadline=deadline,
        due_at=deadline,
        created_at=now,
    )
    uow.session.add(approval)
    executions.set_step(ex, step_id, status=S.STEP_WAITING)
    ex.gate = {
        "kind": "approval",
        "step_id": step_id,
        "approval_id": approval.id,
        "approval_kind": kind,
        "message": message,
    }
    executions.set_status(ex, "await_approval")
    uow.events.add("approval_requested", view(approval), workspace=ex.workspace_id)
    notification_outbox.approval_opened(uow.session, approval)
    return approval


# -- reading ------------------------------------------------------------------------------------------------------


def get(session: Session, workspace_id: str, approval_id: str) -> Approval:
    return in_workspace(session, Approval, workspace_id, approval_id, "approval")


def list_page(
    session: Session,
    workspace_id: str,
    *,
    status: str | None = None,
    execution_id: str | None = None,
    page: int = 1,
    per_page: int = 20,
) -> tuple[list[Approval], int]:
    """The workspace's approvals, newest first; `status` is one of core.approvals.STATUS_FILTERS."""
    where = [Approval.workspace_id == workspace_id]
    if status:
        where.append(Approval.status.in_(A.STATUS_FILTERS[status]))
    if execution_id:
        where.append(Approval.execution_id == execution_id)
    total = session.scalar(select(func.count()).select_from(Approval).where(*where)) or 0
    rows = session.scalars(
        select(Approval)
        .where(*where)
        .order_by(Approval.created_at.desc(), Approval.id.desc())
        .offset((page - 1) * per_page)
        .limit(per_page)
    ).all()
    return list(rows), total


def by_step(session: Session, execution_id: str) -> dict[str, dict[str, str]]:
    """step id -> {approval_id, status, kind} of each step's latest approval (the execution detail shows them)."""
    rows = session.execute(
        select(Approval.step_id, Approval.id, Approval.status, Approval.kind)
        .where(Approval.execution_id == execution_id)
        .order_by(Approval.created_at)
    ).all()
    return {r.step_id: {"approval_id": r.id, "status": r.status, "kind": r.kind} for r in rows}


def view(a: Approval) -> dict[str, Any]:
    """docs/api.md's approval shape (and a few more fields)."""
    return jsonable(
        {
            "approval_id": a.id,
            "execution_id": a.execution_id,
            "step_id": a.step_id,
            "kind": a.kind,
            "agent": a.agent,
            "status": a.status,
            "message": a.message,
            "tool": a.tool,
            "params": a.params,
            "policy": a.policy,
            "approvers": {"roles": list(a.approvers.get("roles", [])), "users": list(a.approvers.get("users", []))},
            "quorum": a.quorum,
            "separate_duties": a.separate_duties,
            "started_by": a.started_by,
            "decisions": [{k: v for k, v in d.items() if k != "user_id"} for d in a.decisions or []],
            "approvals": len(A.approvals_counted(a.decisions or [])),
            "deadline": a.deadline,
            "on_timeout": a.on_timeout,
            "timeout_s": a.timeout_s,
            "created_at": a.created_at,
            "decided_at": a.decided_at,
        }
    )


def state_of(a: Approval) -> A.ApprovalState:
    """The row as core/approvals' state, which decides what a decision, a timeout or an expiry makes of it."""
    return A.ApprovalState(
        kind=a.kind,
        status=a.status,
        approvers=a.approvers or {},
        quorum=a.quorum,
        separate_duties=a.separate_duties,
        started_by=a.started_by,
        on_timeout=a.on_timeout,
        decisions=tuple(a.decisions or ()),
    )


def locked(session: Session, workspace_id: str | None, approval_id: str) -> tuple[Execution | None, Approval]:
    """The approval and its execution, locked in the one order (execution, then approval) on PostgreSQL, and read
    as they are now (SQLite: the transaction began IMMEDIATE, one writer at a time)."""
    first = session.get(Approval, approval_id)
    if first is None or (workspace_id is not None and first.workspace_id != workspace_id):
        raise NotFound(f"approval {approval_id} not found")
    # a gateway call's review belongs to no execution (services/gateway reads its decision)
    ex = executions.get_any(session, first.execution_id, for_update=True) if first.execution_id else None
    query = select(Approval).where(Approval.id == approval_id).execution_options(populate_existing=True)
    approval = session.scalar(query.with_for_update() if row_locks(session) else query)
    if approval is None:  # (deleted meanwhile)
        raise NotFound(f"approval {approval_id} not found")
    return ex, approval


def store(a: Approval, after: A.ApprovalState) -> None:
    """Write core/approvals' new state back into the row (decided now, and no longer due, once final). The Slack
    messages of the review are updated after commit: once final, and at each approval a quorum counts."""
    counted_more = len(after.decisions) > len(a.decisions or ())
    a.status, a.decisions = after.status, jsonable(list(after.decisions))
    if after.status in A.FINAL:
        a.decided_at, a.due_at = utcnow(), None
    if after.status in A.FINAL or counted_more:  # no buttons left once final; else who approved so far
        slack_updates.approval_changed(a)


def expire(uow: UnitOfWork, a: Approval, actor: str, reason: str, **after: Any) -> None:
    """A pending approval ends unanswered (its execution was cancelled, its agent identity revoked): it expires with
    the reason, leaves the queues (`approval_decided`), and deciding it is a 409 saying why. Audited as
    `approval_expire`, `after` added to what the audit says it became."""
    store(a, A.expire(state_of(a), utcnow(), actor, reason))
    audit.record(
        uow.session,
        a.workspace_id,
        actor,
        "approval_expire",
        target_type="approval",
        target_id=a.id,
        execution_id=a.execution_id,
        before={"status": A.PENDING},
        after={"status": a.status, "reason": reason, **after},
        result=a.status,
    )
    uow.events.add("approval_decided", view(a), workspace=a.workspace_id)
