"""A scope's latest decided calls as core.regions.replay's `Past`, newest first: a workflow step's (or an agent
step's calls of one tool, `<agent step>:<tool>`) from its decisions and suggestions, read through the index of a
step's decisions (migration 0026); a gateway tool's from its reviews (approvals of kind `gateway`, the held call's
arguments as the agent sent them). Bounded by the caller's limit (at most core.regions.replay.MAX_CALLS)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import gateway_learning as L
from core.coaching import autonomy
from core.errors import NotFound
from core.policy import Call
from core.regions.replay import MAX_CALLS, Past
from core.tools import ToolRegistry
from services.decisions.approvals import review_kind
from services.gateway import learning
from services.models.approvals import Approval
from services.models.coaching import Decision, Suggestion, not_a_check
from services.models.executions import Execution
from services.models.gateway import GatewayCall
from services.models.workflows import Workflow
from services.policies import service as policies
from services.workflows import service as workflows


def _risk(tools: ToolRegistry | None, tool: str, stored: Any) -> str | None:
    """The registered tool's risk now; without a registry, the risk the call's stored verdict named."""
    if tools is not None:
        found = tools.get(tool)
        if found is not None:
            return getattr(found, "risk", None)
    return stored.get("risk") if isinstance(stored, dict) else None


def check_step(session: Session, wf: Workflow, step_id: str) -> None:
    """404 unless the workflow's current definition has the step (for `<agent step>:<tool>`: the agent step)."""
    owner = step_id.partition(":")[0]
    steps = workflows.version_row(session, wf).definition.get("steps", [])
    written = {s.get("id") for s in steps if isinstance(s, dict)}
    if owner not in written:
        raise NotFound(f"workflow {wf.id} has no step {owner!r}", details={"step_id": step_id})


def _outside_mode(wf: Workflow, unit: str, owner: str) -> str:
    modes = autonomy.step_modes(wf.settings)
    return modes.get(unit) or modes.get(owner) or (autonomy.AUTO if wf.mode == autonomy.AUTO else autonomy.COACHING)


def step_history(
    session: Session,
    wf: Workflow,
    step_id: str | None,
    limit: int,
    *,
    tools: ToolRegistry | None = None,
    counted_only: bool = False,
) -> list[Past]:
    """The workflow's latest decided calls of one step (None: of all its steps), newest first."""
    query = (
        select(Decision, Suggestion)
        .join(Suggestion, Suggestion.id == Decision.suggestion_id)
        .where(Decision.workspace_id == wf.workspace_id, Decision.workflow_id == wf.id, not_a_check())
    )
    if step_id is not None:
        owner, _, tool = step_id.partition(":")
        query = query.where(Decision.step_id == owner)
        if tool:
            query = query.where(Suggestion.tool == tool)
    if counted_only:
        query = query.where(Decision.decision != "skip")
    rows = session.execute(
        query.order_by(Decision.created_at.desc(), Decision.id.desc()).limit(max(1, min(limit, MAX_CALLS)))
    ).all()
    return _pasts(session, {wf.id: wf}, rows, tools)


def workspace_history(
    session: Session, workspace_id: str, limit: int, *, tools: ToolRegistry | None = None
) -> list[Past]:
    """The workspace's latest decided calls of tools across its workflows, newest first."""
    rows = session.execute(
        select(Decision, Suggestion)
        .join(Suggestion, Suggestion.id == Decision.suggestion_id)
        .where(Decision.workspace_id == workspace_id, Suggestion.tool.is_not(None), not_a_check())
        .order_by(Decision.created_at.desc(), Decision.id.desc())
        .limit(max(1, min(limit, MAX_CALLS)))
    ).all()
    ids = {d.workflow_id for d, _s in rows}
    found = {wf.id: wf for wf in session.scalars(select(Workflow).where(Workflow.id.in_(ids)))} if ids else {}
    return _pasts(session, found, [(d, s) for d, s in rows if d.workflow_id in found], tools)


def _pasts(session: Session, wfs: dict[str, Workflow], rows, tools: ToolRegistry | None) -> list[Past]:
    execution_ids = {d.execution_id for d, _s in rows}
    starters = (
        dict(session.execute(select(Execution.id, Execution.started_by).where(Execution.id.in_(execution_ids))).all())
        if execution_ids
        else {}
    )
    out = []
    for d, sug in rows:
        wf = wfs[d.workflow_id]
        agent_call = sug.kind == "tool_call"
        tool = sug.tool or ""
        unit = autonomy.tool_unit(d.step_id, sug.tool) if agent_call else d.step_id
        call = Call(
            tool=tool,
            params=sug.params if isinstance(sug.params, dict) else {},
            step_type="agent" if agent_call else "action",
            risk=_risk(tools, tool, sug.policy),
            workflow_id=d.workflow_id,
            user=policies.starter(session, starters.get(d.execution_id)),
            agent_step=d.step_id if agent_call else None,
        )
        out.append(
            Past(
                call,
                d.decision,
                _outside_mode(wf, unit, d.step_id),
                link={
                    "suggestion_id": d.suggestion_id,
                    "execution_id": d.execution_id,
                    "decision_id": d.id,
                    "step_id": unit,
                    "path": f"/executions/{d.execution_id}",
                    "created_at": d.created_at.isoformat(),
                },
            )
        )
    return out


def gateway_history(
    session: Session,
    workspace_id: str,
    tool: str,
    limit: int,
    *,
    identity: str | None = None,
    tools: ToolRegistry | None = None,
    counted_only: bool = False,
) -> list[Past]:
    """A gateway tool's latest reviewed calls (by one identity, or all), newest first. Every review is counted
    (approve: accept, edit: correct, reject: reject); `counted_only` changes nothing here (a review is never a
    skip)."""
    del counted_only
    query = (
        select(Approval, GatewayCall.id, GatewayCall.arguments)
        .outerjoin(GatewayCall, GatewayCall.approval_id == Approval.id)
        .where(
            Approval.workspace_id == workspace_id,
            Approval.kind == "gateway",
            Approval.tool == tool,
            Approval.status.in_(("approved", "rejected")),
        )
    )
    if identity is not None:
        query = query.where(Approval.agent == identity)
    rows = session.execute(
        query.order_by(Approval.created_at.desc(), Approval.id.desc()).limit(max(1, min(limit, MAX_CALLS)))
    ).all()
    modes: dict[str, str] = {}
    out = []
    for approval, call_id, arguments in rows:
        agent = approval.agent or ""
        if agent not in modes:
            modes[agent] = learning.gate_for(session, workspace_id, tool, agent).mode
        params = (
            arguments if isinstance(arguments, dict) else approval.params if isinstance(approval.params, dict) else {}
        )
        call = Call(
            tool=tool, params=params, step_type="action", risk=_risk(tools, tool, approval.policy), agent=approval.agent
        )
        out.append(
            Past(
                call,
                L.DECISION_KIND[review_kind(approval)],
                modes[agent],
                gateway=True,
                link={
                    "approval_id": approval.id,
                    "call_id": call_id,
                    "agent": approval.agent,
                    "path": None,
                    "created_at": approval.created_at.isoformat(),
                },
            )
        )
    return out
