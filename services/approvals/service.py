"""Approvals: storage and transactions around core/approvals (the rules live there).

Two kinds are opened here, and decided, timed out and expired the same way:
- `step`: an `approval` step of a definition (`open_step`, called by the runner at the step's gate);
- `tool_call`: a review a policy forces before an action step's tool runs (`open_tool_call`). Approved, the step
  runs with the approval's params (an `edit` replaces them: schema-checked, and re-evaluated by the `recheck`
  hook when one is set); rejected, the tool never runs.

Every function runs in the caller's transaction; the events it adds are pushed once that commits. Locks are
taken in one order everywhere (the execution's row, then the approval's), so a decision, a timeout and a cancel
of the same execution take turns, and only the first of them finds the approval pending.

Deadlines are rows, not timers: a pending approval with a deadline has `due_at`, the runner's deadline scanner
(services.executions.runner.Runner.fire_due, every COACH_APPROVAL_SCAN_S seconds and at start-up) fires the due ones.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core import approvals as A
from core.errors import NotFound, ValidationFailed
from core.execution import states as S
from core.execution.engine import template_context
from core.templating import render_value
from core.tools import ToolRegistry, schema_errors
from core.workflow import StepDef, WorkflowDef
from services.agents import replies as agent_replies
from services.approvals import held
from services.approvals.models import Approval
from services.audit import service as audit
from services.db import row_locks
from services.executions import service as executions
from services.executions.models import Execution
from services.metrics import evidence
from services.notifications import outbox as notification_outbox
from services.gateway import builtins as gateway_builtins, learning as gateway_learning
from services.notifier import Events, jsonable
from services.orm import utcnow

# recheck(session, approval, params) -> the policy's verdict for edited params ({"effect": ..., ...}, the
# answer of POST /api/policies/evaluate), or None when no policy applies. Set it on the Services object as
# `approval_recheck` (or pass it to submit). A verdict whose effect is "deny" refuses the edit (422).
Recheck = Callable[[Session, Approval, dict], "dict | None"]


# -- opening ------------------------------------------------------------------------------------------------------

def open_step(session: Session, ex: Execution, defn: WorkflowDef, step: StepDef, events: Events) -> Approval:
    """An `approval` step's gate: the step waits, the execution waits for approval, the approval is asked for.
    Raises TemplateFailure when the message cannot be rendered (the runner fails the step with it)."""
    spec = step.approval or A.ApprovalSpec()
    message = spec.message
    if message:
        rendered = render_value(message, template_context(executions.to_state(ex)), f"steps.{step.id}.message")
        message = rendered if isinstance(rendered, str) else str(jsonable(rendered))
    return _open(session, ex, step.id, "step", spec, message or f"Approve step {step.name or step.id}?", events)


def open_tool_call(session: Session, ex: Execution, step_id: str, tool: str, params: dict, policy: dict | None,
                   events: Events, *, spec: A.ApprovalSpec | None = None, message: str | None = None) -> Approval:
    """A policy-forced review of an action step's tool call, in the caller's transaction (the runner's, where
    the policy said `require_review`). The step waits; approved, it runs with `approval.params` (its step state
    gets decision approve or edit and those params, so the gate must not fire again for a step whose `decision`
    is set); rejected, it never runs and the execution fails. `spec` says who approves (default: one lead)."""
    spec = spec or A.ApprovalSpec()
    reason = ((policy or {}).get("rule") or {}).get("reason") if isinstance(policy, dict) else None
    text = message or spec.message or f"Review the call of {tool}" + (f": {reason}" if reason else "")
    return _open(session, ex, step_id, "tool_call", spec, text, events, tool=tool, params=params, policy=policy)


def open_agent(session: Session, ex: Execution, step_id: str, message: str, events: Events) -> Approval:
    """An agent step's REQUEST_APPROVAL (services.agents.service): approved, the agent is told and goes on; rejected, the step
    is rejected and the execution fails, as an approval step's. Who approves: one lead (the default spec)."""
    approval = _open(session, ex, step_id, "step", A.ApprovalSpec(), message[:10_000] or "The agent asks for approval.",
                     events)
    ex.gate = {**ex.gate, "agent": True}
    return approval


def _open(session: Session, ex: Execution, step_id: str, kind: str, spec: A.ApprovalSpec, message: str,
          events: Events, *, tool: str | None = None, params: Any = None, policy: dict | None = None) -> Approval:
    now = utcnow()
    deadline = now + timedelta(seconds=spec.timeout_s) if spec.timeout_s else None
    approval = Approval(workspace_id=ex.workspace_id, execution_id=ex.id, step_id=step_id, kind=kind,
                        status=A.PENDING, message=message, tool=tool, params=params, policy=jsonable(policy),
                        approvers=spec.approvers, quorum=spec.quorum, separate_duties=spec.separate_duties,
                        started_by=ex.started_by, decisions=[], replies={}, timeout_s=spec.timeout_s,
                        on_timeout=spec.on_timeout, deadline=deadline, due_at=deadline, created_at=now)
    session.add(approval)
    executions.set_step(ex, step_id, status=S.STEP_WAITING)
    ex.gate = {"kind": "approval", "step_id": step_id, "approval_id": approval.id, "approval_kind": kind,
               "message": message}
    executions.set_status(ex, "await_approval")
    events.add("approval_requested", view(approval), workspace=ex.workspace_id)
    notification_outbox.approval_opened(session, approval)
    return approval


# -- reading ------------------------------------------------------------------------------------------------------

def get(session: Session, workspace_id: str, approval_id: str) -> Approval:
    found = session.get(Approval, approval_id)
    if found is None or found.workspace_id != workspace_id:
        raise NotFound(f"approval {approval_id} not found")
    return found


def list_page(session: Session, workspace_id: str, *, status: str | None = None, execution_id: str | None = None,
              page: int = 1, per_page: int = 20) -> tuple[list[Approval], int]:
    """The workspace's approvals, newest first; `status` is one of core.approvals.STATUS_FILTERS."""
    where = [Approval.workspace_id == workspace_id]
    if status:
        where.append(Approval.status.in_(A.STATUS_FILTERS[status]))
    if execution_id:
        where.append(Approval.execution_id == execution_id)
    total = session.scalar(select(func.count()).select_from(Approval).where(*where)) or 0
    rows = session.scalars(select(Approval).where(*where).order_by(Approval.created_at.desc(), Approval.id.desc())
                           .offset((page - 1) * per_page).limit(per_page)).all()
    return list(rows), total


def by_step(session: Session, execution_id: str) -> dict[str, dict[str, str]]:
    """step id -> {approval_id, status, kind} of each step's latest approval (the execution detail shows them)."""
    rows = session.execute(select(Approval.step_id, Approval.id, Approval.status, Approval.kind)
                           .where(Approval.execution_id == execution_id).order_by(Approval.created_at)).all()
    return {r.step_id: {"approval_id": r.id, "status": r.status, "kind": r.kind} for r in rows}


def view(a: Approval) -> dict[str, Any]:
    """DESIGN.md §4's approval shape (and a few more fields)."""
    return jsonable({
        "approval_id": a.id, "execution_id": a.execution_id, "step_id": a.step_id, "kind": a.kind, "agent": a.agent,
        "status": a.status, "message": a.message, "tool": a.tool, "params": a.params, "policy": a.policy,
        "approvers": {"roles": list(a.approvers.get("roles", [])), "users": list(a.approvers.get("users", []))},
        "quorum": a.quorum, "separate_duties": a.separate_duties, "started_by": a.started_by,
        "decisions": [{k: v for k, v in d.items() if k != "user_id"} for d in a.decisions or []],
        "approvals": len(A.approvals_counted(a.decisions or [])), "deadline": a.deadline,
        "on_timeout": a.on_timeout, "timeout_s": a.timeout_s, "created_at": a.created_at,
        "decided_at": a.decided_at,
    })


def _state(a: Approval) -> A.ApprovalState:
    return A.ApprovalState(kind=a.kind, status=a.status, approvers=a.approvers or {}, quorum=a.quorum,
                           separate_duties=a.separate_duties, started_by=a.started_by, on_timeout=a.on_timeout,
                           decisions=tuple(a.decisions or ()))


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
    return ex, approval


# -- deciding -----------------------------------------------------------------------------------------------------

def decide(session: Session, tools: ToolRegistry, workspace_id: str, approval_id: str, body: dict[str, Any],
           actor: A.Actor, events: Events, idempotency_key: str | None = None,
           recheck: Recheck | None = None, undo_window_s: float = 0.0) -> dict[str, Any]:
    """Apply one person's decision ({decision: approve|reject|edit, comment, params}). The answer is
    {approval, execution}; with an Idempotency-Key it is kept, and a retry with that key gets it again. A decision
    that settles an execution's approval is held for the workspace's undo window first (services.approvals.held)."""
    ex, a = locked(session, workspace_id, approval_id)
    if idempotency_key and idempotency_key in (a.replies or {}):
        return a.replies[idempotency_key]
    now = utcnow()
    decision = body.get("decision")
    after = A.decide(_state(a), actor, decision, body.get("comment"), now)
    params_before = a.params
    if decision == "edit":
        _edit(session, tools, a, body.get("params"), recheck)
    _store(a, after)
    audit.record(session, workspace_id, actor.email, "approval_decision", target_type="approval", target_id=a.id,
                 execution_id=ex.id if ex is not None else None, before={"status": A.PENDING, "params": params_before},
                 after={"decision": decision, "comment": body.get("comment"), "status": a.status,
                        "params": a.params, **({"agent": a.agent} if a.agent else {})}, result=decision)
    if ex is None:  # a gateway call's review: the held call (services/gateway) reads the decision from the row
        if a.status in A.FINAL:
            events.add("approval_decided", view(a), workspace=a.workspace_id)
            if a.kind == "gateway" and a.status in (A.APPROVED, A.REJECTED) and a.tool and a.agent:
                # counted per tool and per agent identity; in AUTO, evidence for the spot-check test
                gateway_learning.count(session, a.workspace_id, a.tool, a.agent, review_kind(a),
                                       max(0.0, (now - a.created_at).total_seconds() * 1000.0), events,
                                       before=params_before, after=a.params)
        response = {"approval": view(a), "execution": None}
        if idempotency_key:
            a.replies = {**(a.replies or {}), idempotency_key: response}
        return response
    window_s = held.window(session, workspace_id, undo_window_s) if a.status in A.FINAL else 0.0
    if window_s > 0:  # settled when the window ends (services.approvals.undo.release), unless taken back before
        held.hold(ex, a, decision, actor.email, now, window_s, params_before)
        events.add("approval_decided", view(a), workspace=ex.workspace_id)
        executions.changed(session, events, ex, a.step_id)
    elif a.status in A.FINAL:
        settle_counted(session, ex, a, now, events)
    update = executions.update_event(ex, a.step_id, steps=False)
    if window_s > 0:
        update["gate"] = ex.gate  # held: the answer says until when, and what an undo puts back
    response = {"approval": view(a), "execution": jsonable(update)}
    if idempotency_key:
        a.replies = {**(a.replies or {}), idempotency_key: response}
    return response


def settle_counted(session: Session, ex: Execution, a: Approval, now: datetime, events: Events) -> None:
    """A final approval acts on its execution (settle), and a review is counted."""
    settle(session, ex, a, events)
    if a.kind == "tool_call" and a.status in (A.APPROVED, A.REJECTED):
        # a policy-forced review of an unattended call is evidence for the spot-check test too
        kind = {"approve": "accept", "edit": "correct", "reject": "reject"}[review_kind(a)]
        latency_ms = max(0.0, (now - a.created_at).total_seconds() * 1000.0)
        evidence.count_review(session, ex, a.step_id, kind, latency_ms, events)


def review_kind(a: Approval) -> str:
    """What a final review (approved or rejected) came to: approve, edit (approved with edited params) or reject."""
    if a.status == A.REJECTED:
        return "reject"
    return "edit" if any(d.get("decision") == "edit" for d in a.decisions or []) else "approve"


def _edit(session: Session, tools: ToolRegistry, a: Approval, params: Any, recheck: Recheck | None) -> None:
    if not isinstance(params, dict):
        raise ValidationFailed("an edit needs the new params", details={"params": ["is required: an object"]})
    tool = tools.get(a.tool or "")
    if tool is None:
        raise ValidationFailed(f"tool {a.tool!r} is not registered on this server", details={"tool": [a.tool or ""]})
    problems = schema_errors(tool.params_schema, params)
    if problems:
        raise ValidationFailed(f"the params do not fit tool {a.tool!r}",
                               details={("params" if k == "(params)" else f"params.{k}"): v for k, v in problems.items()})
    verdict = recheck(session, a, params) if recheck is not None else None
    if verdict is not None:
        if verdict.get("effect") == "deny":
            reason = (verdict.get("rule") or {}).get("reason") or "a policy denies these params"
            raise ValidationFailed(f"the policy denies the edited call: {reason}",
                                   details={"params": [f"denied by policy: {reason}"]})
        a.policy = jsonable(verdict)
    a.params = params


def _store(a: Approval, after: A.ApprovalState) -> None:
    a.status, a.decisions = after.status, jsonable(list(after.decisions))
    if after.status in A.FINAL:
        a.decided_at, a.due_at = utcnow(), None


def settle(session: Session, ex: Execution, a: Approval, events: Events) -> None:
    """What a final approval does to its step and execution."""
    now = utcnow()
    last = (a.decisions or [{}])[-1]
    by_agent = bool((ex.gate or {}).get("agent")) and (ex.gate or {}).get("approval_id") == a.id
    ex.gate = None
    if a.status == A.APPROVED:
        if by_agent:  # the agent asked (REQUEST_APPROVAL): it is told, and its step runs on
            agent_replies.approved(session, ex, a.step_id, last.get("user") or A.SYSTEM, last.get("comment"))
        elif a.kind == "tool_call":  # the step runs now, with the approved params (the runner reads decision)
            edited = any(d["decision"] == "edit" for d in a.decisions)
            executions.set_step(ex, a.step_id, status=S.STEP_PENDING, decision="edit" if edited else "approve",
                                params=a.params)
        else:
            executions.set_step(ex, a.step_id, status=S.STEP_SUCCEEDED, decision="approve", finished_at=now,
                                output={"approved": True, "approval_id": a.id, "decisions": view(a)["decisions"]})
        executions.set_status(ex, "approve")
    else:
        who = last.get("user") or A.SYSTEM
        comment = last.get("comment") or ""
        if a.status == A.REJECTED:
            message = f"rejected by {who}" + (f": {comment}" if comment else "")
            executions.set_step(ex, a.step_id, status=S.STEP_REJECTED, decision="reject", error=message,
                                finished_at=now)
        else:
            message = f"approval expired: {comment}"
            executions.set_step(ex, a.step_id, status=S.STEP_FAILED, error=message, finished_at=now)
        ex.error = {"step_id": a.step_id, "message": message, "approval_id": a.id}
        executions.set_status(ex, "fail")
    events.add("approval_decided", view(a), workspace=ex.workspace_id)
    executions.changed(session, events, ex, a.step_id)


def submit(services, workspace_id: str, approval_id: str, body: dict[str, Any], actor: A.Actor,
           idempotency_key: str | None = None, recheck: Recheck | None = None) -> dict[str, Any]:
    """The one way in for a decision (REST): apply, commit, push, and let the runner go on."""
    events = Events()
    recheck = recheck or services.approval_recheck
    with services.db.transaction() as session:
        # the workspace's tools with the built-ins its agents call through the gateway (`coach.echo`): an agent's held
        # call of one is edited (schema-checked) like any other
        tools = gateway_builtins.registry(services.tools, session, workspace_id)
        response = decide(session, tools, workspace_id, approval_id, body, actor, events,
                          idempotency_key, recheck, services.settings.undo_window_s)
    services.notifier.send(events)
    if response["execution"] and response["execution"]["status"] in S.RUNNABLE:
        services.runner.schedule(response["execution"]["execution_id"])
    return response


# -- deadlines and cancels ----------------------------------------------------------------------------------------

def due(session: Session, now: datetime, limit: int = 100) -> list[str]:
    """Ids of pending approvals whose deadline has passed, oldest deadline first (index ix_approvals_due)."""
    return list(session.scalars(select(Approval.id).where(Approval.due_at <= now)
                                .order_by(Approval.due_at).limit(limit)))


def fire_timeout(session: Session, approval_id: str, now: datetime, events: Events) -> Execution | None:
    """Fire one approval's deadline, once: under the locks it is fired only if still pending and due (a
    concurrent decision, cancel or scanner got there first otherwise). Returns its execution when it fired."""
    try:
        ex, a = locked(session, None, approval_id)
    except NotFound:
        return None
    if ex is None or a is None or not A.is_due(a.status, a.due_at, now):
        return None
    _store(a, A.time_out(_state(a), now, a.timeout_s))
    audit.record(session, a.workspace_id, A.SYSTEM, "approval_timeout", target_type="approval", target_id=a.id,
                 execution_id=ex.id, before={"status": A.PENDING, "deadline": a.deadline},
                 after={"status": a.status, "on_timeout": a.on_timeout}, result=a.status)
    settle(session, ex, a, events)
    return ex


def expire_for_execution(session: Session, ex: Execution, actor: str, reason: str, events: Events | None) -> int:
    """The execution ended another way (cancelled): its pending approvals expire with it, so no queue keeps them.
    In the caller's transaction, which holds the execution's lock."""
    query = select(Approval).where(Approval.execution_id == ex.id, Approval.status == A.PENDING)
    rows = session.scalars(query.with_for_update() if row_locks(session) else query).all()
    now = utcnow()
    for a in rows:
        _store(a, A.expire(_state(a), now, actor, reason))
        audit.record(session, a.workspace_id, actor, "approval_expire", target_type="approval", target_id=a.id,
                     execution_id=ex.id, before={"status": A.PENDING}, after={"status": a.status, "reason": reason},
                     result=a.status)
        if events is not None:
            events.add("approval_decided", view(a), workspace=ex.workspace_id)
    return len(rows)
