"""Deciding an approval: one person's decision (approve, edit, reject) applied under the locks, held for the undo
window or settled at once, and what a final approval does to its step and execution (settle), a review counted as
evidence. `submit` is the one way in from REST, Slack and action links.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from core import approvals as A
from core.coaching import undo as U
from core.errors import ValidationFailed
from core.execution import states as S
from core.tools import ToolRegistry, schema_errors
from services.agents import replies as agent_replies
from services.approvals import held
from services.approvals import service as approvals
from services.audit import service as audit
from services.executions import service as executions
from services.gateway import builtins as gateway_builtins
from services.gateway import learning as gateway_learning
from services.metrics import evidence
from services.models.approvals import Approval
from services.models.executions import Execution
from services.notifier import jsonable
from services.orm import utcnow
from services.policies import service as policies
from services.unit_of_work import UnitOfWork

# recheck(session, approval, params) -> the policy's verdict for edited params ({"effect": ..., ...}, the
# answer of POST /api/policies/evaluate), or None when no policy applies. Set it on the Services object as
# `approval_recheck` (or pass it to submit). A verdict whose effect is "deny" refuses the edit (422).
Recheck = Callable[[Session, Approval, dict], "dict | None"]


def approval_recheck(tools: ToolRegistry):
    """The `recheck` hook (the Services object's `approval_recheck`): the verdict on a reviewed call's edited params
    (deny refuses the edit; the tool stays the approval's: an edit changes params only). A gateway call is judged as
    the gateway judges it (its built-in tools beside the workspace's), any other as its execution's step."""

    def recheck(session: Session, approval, params: dict) -> dict[str, Any] | None:
        if approval.kind == "gateway" and approval.tool:  # an agent's call held by the MCP gateway: no execution
            call = policies.call_for(
                gateway_builtins.registry(tools, session, approval.workspace_id),
                approval.tool,
                params,
                agent=approval.agent,
            )
            return policies.evaluate(session, approval.workspace_id, call).to_dict()
        ex = session.get(Execution, approval.execution_id) if approval.execution_id else None
        if ex is None or not approval.tool:
            return None
        call = policies.call_for(
            tools.for_workspace(ex.workspace_id),
            approval.tool,
            params,
            step_type="action",
            workflow_id=ex.workflow_id,
            user=policies.starter(session, ex.started_by),
        )
        return policies.evaluate(session, ex.workspace_id, call).to_dict()

    return recheck


def decide(
    uow: UnitOfWork,
    tools: ToolRegistry,
    workspace_id: str,
    approval_id: str,
    body: dict[str, Any],
    actor: A.Actor,
    idempotency_key: str | None = None,
    recheck: Recheck | None = None,
    undo_window_s: float = 0.0,
) -> dict[str, Any]:
    """Apply one person's decision ({decision: approve|reject|edit, comment, params}). The answer is
    {approval, execution}; with an Idempotency-Key it is kept, and a retry with that key gets it again. A decision
    that settles an execution's approval is held for the workspace's undo window first (services.approvals.held)."""
    session = uow.session
    ex, a = approvals.locked(session, workspace_id, approval_id)
    if idempotency_key and idempotency_key in (a.replies or {}):
        return a.replies[idempotency_key]
    now = utcnow()
    decision = body.get("decision")
    if not isinstance(decision, str):  # A.decide refuses it as it refuses any unknown decision, naming the choices
        decision = ""
    after = A.decide(approvals.state_of(a), actor, decision, body.get("comment"), now)
    params_before = a.params
    if decision == "edit":
        _edit(session, tools, a, body.get("params"), recheck)
    approvals.store(a, after)
    audit.record(
        session,
        workspace_id,
        actor.email,
        "approval_decision",
        target_type="approval",
        target_id=a.id,
        execution_id=ex.id if ex is not None else None,
        before={"status": A.PENDING, "params": params_before},
        after={
            "decision": decision,
            "comment": body.get("comment"),
            "status": a.status,
            "params": a.params,
            **({"agent": a.agent} if a.agent else {}),
        },
        result=decision,
    )
    if a.status not in A.FINAL:  # a vote short of the quorum: every open queue shows the progress at once
        uow.events.add("approval_decided", approvals.view(a), workspace=a.workspace_id)
    if ex is None:  # a gateway call's review: the held call (services/gateway) reads the decision from the row
        if a.status in A.FINAL:
            uow.events.add("approval_decided", approvals.view(a), workspace=a.workspace_id)
            if a.kind == "gateway" and a.status in (A.APPROVED, A.REJECTED) and a.tool and a.agent:
                # counted per tool and per agent identity; in AUTO, evidence for the spot-check test
                gateway_learning.count(
                    uow,
                    a.workspace_id,
                    a.tool,
                    a.agent,
                    review_kind(a),
                    max(0.0, (now - a.created_at).total_seconds() * 1000.0),
                    before=params_before,
                    after=a.params,
                    region=(a.policy or {}).get("region") if isinstance(a.policy, dict) else None,
                )
        response = {"approval": approvals.view(a), "execution": None}
        if idempotency_key:
            a.replies = {**(a.replies or {}), idempotency_key: response}
        return response
    window_s = held.window(session, workspace_id, undo_window_s) if a.status in A.FINAL else 0.0
    if (
        window_s > 0
    ):  # settled when the window ends (services.decisions.approval_undo.release), unless taken back before
        held.hold(ex, a, decision, actor.email, now, window_s, params_before)
        uow.events.add("approval_decided", approvals.view(a), workspace=ex.workspace_id)
        executions.changed(uow, ex, a.step_id)
    elif a.status in A.FINAL:
        settle_counted(uow, ex, a, now)
    update = executions.update_event(ex, a.step_id, steps=False)
    if window_s > 0:
        update["gate"] = ex.gate  # held: the answer says until when, and what an undo puts back
    response = {"approval": approvals.view(a), "execution": jsonable(update)}
    if idempotency_key:
        a.replies = {**(a.replies or {}), idempotency_key: response}
    return response


def settle_counted(uow: UnitOfWork, ex: Execution, a: Approval, now: datetime) -> None:
    """A final approval acts on its execution (settle), and a review is counted."""
    settle(uow, ex, a)
    if a.kind == "tool_call" and a.status in (A.APPROVED, A.REJECTED):
        # a policy-forced review of an unattended call is evidence for the spot-check test too
        kind = {"approve": "accept", "edit": "correct", "reject": "reject"}[review_kind(a)]
        latency_ms = max(0.0, (now - a.created_at).total_seconds() * 1000.0)
        evidence.count_review(uow, ex, a.step_id, kind, latency_ms)


def review_kind(a: Approval) -> str:
    """What a final review (approved or rejected) came to: approve, edit (approved with edited params) or reject."""
    if a.status == A.REJECTED:
        return "reject"
    return "edit" if any(d.get("decision") == "edit" for d in a.decisions or []) else "approve"


def _edit(session: Session, tools: ToolRegistry, a: Approval, params: Any, recheck: Recheck | None) -> None:
    if not isinstance(params, dict):
        raise ValidationFailed("an edit needs the new params", details={"params": ["is required: an object"]})
    if a.kind == "gateway":  # an agent's call held by the gateway may be of a built-in it exposes (`coach.echo`)
        tools = gateway_builtins.registry(tools, session, a.workspace_id)
    tool = tools.get(a.tool or "")
    if tool is None:
        raise ValidationFailed(f"tool {a.tool!r} is not registered on this server", details={"tool": [a.tool or ""]})
    problems = schema_errors(tool.params_schema, params)
    if problems:
        raise ValidationFailed(
            f"the params do not fit tool {a.tool!r}",
            details={("params" if k == "(params)" else f"params.{k}"): v for k, v in problems.items()},
        )
    verdict = recheck(session, a, params) if recheck is not None else None
    if verdict is not None:
        if verdict.get("effect") == "deny":
            reason = (verdict.get("rule") or {}).get("reason") or "a policy denies these params"
            raise ValidationFailed(
                f"the policy denies the edited call: {reason}", details={"params": [f"denied by policy: {reason}"]}
            )
        a.policy = jsonable(verdict)
    a.params = params


def settle(uow: UnitOfWork, ex: Execution, a: Approval) -> None:
    """What a final approval does to its step and execution."""
    now = utcnow()
    last = (a.decisions or [{}])[-1]
    gate = ex.gate or {}
    if gate.get("kind") == U.HELD and gate.get("approval_id") == a.id:  # released after the undo window: the gate
        gate = gate.get("reopen") or {}  # the decision held is the one of the gate it replaced
    by_agent = bool(gate.get("agent")) and gate.get("approval_id") == a.id
    ex.gate = None
    if a.status == A.APPROVED:
        if by_agent:  # the agent asked (REQUEST_APPROVAL): it is told, and its step runs on
            agent_replies.approved(uow.session, ex, a.step_id, last.get("user") or A.SYSTEM, last.get("comment"))
        elif a.kind == "tool_call":  # the step runs now, with the approved params (the runner reads decision)
            edited = any(d["decision"] == "edit" for d in a.decisions)
            executions.set_step(
                ex, a.step_id, status=S.STEP_PENDING, decision="edit" if edited else "approve", params=a.params
            )
        else:
            executions.set_step(
                ex,
                a.step_id,
                status=S.STEP_SUCCEEDED,
                decision="approve",
                finished_at=now,
                output={"approved": True, "approval_id": a.id, "decisions": approvals.view(a)["decisions"]},
            )
        executions.set_status(ex, "approve")
    else:
        who = last.get("user") or A.SYSTEM
        comment = last.get("comment") or ""
        if a.status == A.REJECTED:
            message = f"rejected by {who}" + (f": {comment}" if comment else "")
            executions.set_step(
                ex, a.step_id, status=S.STEP_REJECTED, decision="reject", error=message, finished_at=now
            )
        else:
            message = f"approval expired: {comment}"
            executions.set_step(ex, a.step_id, status=S.STEP_FAILED, error=message, finished_at=now)
        ex.error = {"step_id": a.step_id, "message": message, "approval_id": a.id}
        executions.set_status(ex, "fail")
    uow.events.add("approval_decided", approvals.view(a), workspace=ex.workspace_id)
    executions.changed(uow, ex, a.step_id)


def submit(
    services,
    workspace_id: str,
    approval_id: str,
    body: dict[str, Any],
    actor: A.Actor,
    idempotency_key: str | None = None,
    recheck: Recheck | None = None,
) -> dict[str, Any]:
    """The one way in for a decision (REST, an email link, Slack): apply, commit, push, and let the runner go on (one
    unit of work)."""
    recheck = recheck or services.approval_recheck
    with services.command() as uow:
        response = decide(
            uow,
            services.tools.for_workspace(workspace_id),
            workspace_id,
            approval_id,
            body,
            actor,
            idempotency_key,
            recheck,
            services.settings.undo_window_s,
        )
        if response["execution"] and response["execution"]["status"] in S.RUNNABLE:
            uow.run_next(response["execution"]["execution_id"])
    return response
