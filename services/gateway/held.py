"""A call held for a review, after the request that made it (services/gateway/calls.py holds it): where it stands
(`look`, asked every half second by the waiting request, or at once when the review is decided in this process), and
its answer once the review is final (`settle`): forwarded with the approved (or edited) arguments by the first
request that claims it, at most once per approval; the reviewer's feedback when rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from core import approvals as A
from core import gateway as G
from core import gateway_learning as L
from services.approvals import service as approvals
from services.db import retrying, rowcount
from services.gateway import builtins, calls, identities
from services.gateway.identities import Agent
from services.models.approvals import Approval
from services.models.gateway import AgentIdentity, GatewayCall
from services.orm import utcnow
from services.unit_of_work import UnitOfWork

REVOKED, WAITING, RUNNING, DECIDED = "revoked", "waiting", "running", "decided"
_LOOK = (
    select(GatewayCall.state, GatewayCall.forwarded_at, Approval.status, AgentIdentity.revoked_at)
    .select_from(GatewayCall)
    .join(AgentIdentity, AgentIdentity.id == GatewayCall.agent_id)
    .outerjoin(Approval, Approval.id == GatewayCall.approval_id)
    .where(GatewayCall.id == bindparam("id"), GatewayCall.agent_id == bindparam("agent_id"))
)


def call_row(session: Session, call_id: str, *, populate_existing: bool = False) -> GatewayCall:
    """A held call's row, which its holder (the request waiting on it, a revoke listing it) knows is there."""
    row = session.get(GatewayCall, call_id, populate_existing=populate_existing)
    if row is None:
        raise LookupError(f"gateway call {call_id} is gone")
    return row


def look(svc, agent: Agent, call_id: str) -> str:
    """Where a held call stands, in one statement on the read engine (a waiting call asks every half second, so a
    hundred waiting agents must cost little): REVOKED (the agent's identity was revoked meanwhile), WAITING (its
    review is still pending), RUNNING (approved, and a request is forwarding it: its result is not in yet), else
    DECIDED (settle answers it)."""

    def read() -> str:
        with svc.db.read_engine.connect() as conn:
            row = conn.execute(_LOOK, {"id": call_id, "agent_id": agent.id}).first()
        if row is None:
            return DECIDED  # settle says that Coach no longer knows it
        if row.revoked_at is not None:
            return REVOKED
        if row.state == calls.HELD:
            return WAITING if row.status == A.PENDING else DECIDED
        forwarding = row.state == calls.FORWARDING and not _interrupted(svc, row.forwarded_at)
        return RUNNING if forwarding else DECIDED

    return retrying(read, tries=4, what="reading a held gateway call")


def settle(svc, agent: Agent, call_id: str) -> dict[str, Any] | None:
    """The held call's answer once its approval is final (forwarding it first when approved and nobody has), or
    None while it waits (or while another request forwards it). A forwarding that outlived every time-out (its server
    process was killed) answers that it was interrupted: it is never sent again. Asked once `look` says DECIDED."""
    step = calls.transaction(svc, "settling a gateway call", lambda session: _settle(svc, session, agent, call_id))
    if step.result is not None or step.forward is None:
        return step.result
    tool_name, params, edit, who, approval_id, original = step.forward
    edited = edit is not None
    tool = builtins.gateway_tool(svc, agent.workspace_id, tool_name)
    if tool is None:
        result, full = (
            G.error_result(f"{tool_name} is no longer one of this workspace's tools; the approved call did not run."),
            0,
        )
    else:
        result, full = calls.forward(svc, tool, params, f"gateway:{call_id}")
    if edited:  # the agent must know that what ran is not what it asked for (as an AUTO correction says)
        result = L.edited(result, original, params, edit.get("user") or who, edit.get("comment") or "", G.STATUS_META)

    def store(session: Session) -> None:
        row = call_row(session, call_id, populate_existing=True)
        row.state = calls.FAILED if result.get("isError") else calls.DONE
        row.result, row.result_bytes, row.finished_at, row.delivered_at = result, full, utcnow(), utcnow()
        calls.audit_call(
            session,
            agent,
            tool_name,
            params,
            "edit" if edited else "approve",
            who=who,
            call_id=call_id,
            result_bytes=full,
            result="error" if result.get("isError") else "ok",
            approval_id=approval_id,
            **({"original_arguments": row.arguments} if edited else {}),
        )

    calls.transaction(svc, "storing a gateway call's result", store)
    return result


@dataclass(frozen=True)
class _Step:
    result: dict[str, Any] | None = None  # the answer now (None and no forward: still waiting)
    forward: tuple | None = None  # claimed: (tool, params, the edit or None, who, approval id, the agent's arguments)


def _settle(svc, session: Session, agent: Agent, call_id: str) -> _Step:
    row = session.get(GatewayCall, call_id)
    if row is None:
        return _Step(G.error_result("Coach no longer knows this held call."))
    if row.state in (calls.DONE, calls.FAILED, calls.REJECTED, calls.CANCELLED):
        if row.delivered_at is None:
            row.delivered_at = utcnow()
        return _Step(row.result)
    if row.state == calls.FORWARDING:
        if not _interrupted(svc, row.forwarded_at):
            return _Step()
        row.state, row.finished_at, row.delivered_at = calls.FAILED, utcnow(), utcnow()
        row.result = G.error_result(
            f"The approved call of {row.tool} was being sent when Coach stopped; Coach "
            f"cannot tell whether it ran, and does not send it again.",
            decision="interrupted",
        )
        calls.audit_call(
            session, agent, row.tool, row.arguments, "interrupted", who="system", call_id=row.id, result="interrupted"
        )
        return _Step(row.result)
    approval = session.get(Approval, row.approval_id) if row.approval_id else None
    if approval is None or approval.status == A.PENDING:
        return _Step()
    last = (approval.decisions or [{}])[-1]
    who, feedback = last.get("user") or A.SYSTEM, last.get("comment") or ""
    if approval.status != A.APPROVED:
        row.state, row.finished_at, row.delivered_at = calls.REJECTED, utcnow(), utcnow()
        row.result = G.error_result(
            G.rejected_text(row.tool, who, feedback), decision="rejected", reviewer=who, feedback=feedback
        )
        calls.audit_call(
            session,
            agent,
            row.tool,
            row.arguments,
            "reject",
            who=who,
            call_id=row.id,
            result="rejected",
            feedback=feedback,
            approval_id=approval.id,
        )
        return _Step(row.result)
    # approved: this request forwards it, unless another claimed it first
    claimed = rowcount(
        session.execute(
            update(GatewayCall)
            .where(GatewayCall.id == call_id, GatewayCall.state == calls.HELD)
            .values(state=calls.FORWARDING, forwarded_at=utcnow(), row_version=GatewayCall.row_version + 1)
            .execution_options(synchronize_session=False)
        )
    )
    if claimed != 1:
        return _Step()
    params = approval.params if isinstance(approval.params, dict) else row.arguments
    edit = next((d for d in reversed(approval.decisions or []) if d.get("decision") == "edit"), None)
    return _Step(forward=(row.tool, params, edit, who, approval.id, row.arguments))


def _interrupted(svc, forwarded_at) -> bool:
    """Whether a forwarding began longer ago than any forwarding can last (its process died meanwhile)."""
    settings = svc.settings
    limit = settings.mcp_call_timeout_s + settings.mcp_connect_timeout_s + 30.0
    return forwarded_at is not None and (utcnow() - forwarded_at).total_seconds() > limit


def held_result(tool: str, call_id: str, waited_s: float) -> dict[str, Any]:
    return G.error_result(G.held_text(tool, call_id, waited_s), decision="pending_review", call_id=call_id)


def running_result(svc, agent: Agent, tool: str, call_id: str, waited_s: float) -> dict[str, Any]:
    """The answer to a call still being forwarded when the hold ends (by another request, or by a process that died
    before the interrupted bound): it was approved and is running, not awaiting review."""

    def read() -> str:
        with svc.db.read() as session:
            row = session.get(GatewayCall, call_id)
            approval = session.get(Approval, row.approval_id) if row is not None and row.approval_id else None
            last = ((approval.decisions if approval is not None else None) or [{}])[-1]
            return last.get("user") or A.SYSTEM

    who = retrying(read, tries=4, what="reading a forwarded gateway call")
    return G.error_result(
        G.running_text(tool, call_id, who, waited_s), decision="approved_running", call_id=call_id, reviewer=who
    )


def revoked_result() -> dict[str, Any]:
    return G.error_result("This agent's identity was revoked; the held call was not run.", decision="revoked")


def revoke(uow: UnitOfWork, workspace_id: str, agent_id: str, actor: str) -> AgentIdentity:
    """Revoke an agent identity (services/gateway/identities.py revoke: its token stops working at once) and end its
    calls held for a review (end_for_revoked below): never run, their reviews expired, a request still waiting on
    one answered that the identity was revoked."""
    row, newly = identities.revoke(uow.session, workspace_id, agent_id, actor)
    if newly:
        end_for_revoked(uow, row, actor)
    return row


def end_for_revoked(uow: UnitOfWork, agent: AgentIdentity, actor: str) -> int:
    """The identity was revoked (in the caller's transaction): each of its calls still held (its review pending, or
    decided and not yet forwarded) ends, `cancelled`, and is never run; a pending review expires with the reason,
    so it leaves the queues and deciding it is a 409 saying why. Audited: `approval_expire` and the call's
    `gateway_call` (decision `revoked`). A call already being forwarded is left to finish."""
    session = uow.session
    ids = session.scalars(
        select(GatewayCall.id).where(GatewayCall.agent_id == agent.id, GatewayCall.state == calls.HELD)
    ).all()
    who = Agent(agent.id, agent.name, agent.workspace_id)
    reason = f"agent {agent.name}'s identity was revoked by {actor}; its held call will not run"
    ended = 0
    for call_id in ids:
        row = call_row(session, call_id)
        a = None
        if row.approval_id:  # locked first, as a decision locks it: a decision and this revoke go one after the other
            _ex, a = approvals.locked(session, agent.workspace_id, row.approval_id)
        now = utcnow()
        # conditional, like the claim for forwarding (settle): a request that claimed it first forwards it
        if (
            rowcount(
                session.execute(
                    update(GatewayCall)
                    .where(GatewayCall.id == call_id, GatewayCall.state == calls.HELD)
                    .values(
                        state=calls.CANCELLED,
                        result=revoked_result(),
                        finished_at=now,
                        delivered_at=now,
                        row_version=GatewayCall.row_version + 1,
                    )
                    .execution_options(synchronize_session=False)
                )
            )
            != 1
        ):
            continue
        ended += 1
        if a is not None and a.status == A.PENDING:
            approvals.expire(uow, a, actor, reason, agent=agent.name)
        calls.audit_call(
            session,
            who,
            row.tool,
            row.arguments,
            "revoked",
            who=actor,
            call_id=call_id,
            result="cancelled",
            reason=reason,
            approval_id=row.approval_id,
        )
    return ended
