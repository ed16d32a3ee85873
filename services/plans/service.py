"""Ad-hoc plans: inline steps (e.g. written by an LLM planner), created -> approved -> executed.

Storage: a plan is an execution whose steps were given inline. Its steps are version 1 of a hidden workflow
(`workflows.kind = 'plan'`: not listed, not in the metrics list or the dashboard, not startable as a workflow), its
execution row is made at creation in status `draft` (the runner only ever picks up pending/running/resumed
executions, so a draft never runs, a restart included), and a `plans` row (same id) says who created and
approved it. Its status is its execution's: draft -> approved -> pending -> the execution states.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core import plans as P
from core.errors import Forbidden, ValidationFailed
from core.execution import states as S
from core.execution.control import with_overrides
from core.execution.engine import StepState, resolve_params, steps_progress
from core.templating import TemplateFailure
from core.tools import ToolRegistry
from core.workflow import WorkflowDef, parse_definition, validate_variables
from services.audit import service as audit
from services.executions import service as executions
from services.models.executions import Execution
from services.models.plans import Plan
from services.models.workflows import Workflow, workflow_of
from services.orm import in_workspace, utcnow
from services.policies import service as policies
from services.users.service import RANK
from services.workflows import service as workflows
from services.workflows.service import DefinitionCache


def parse(tools: ToolRegistry, body: dict[str, Any]) -> tuple[WorkflowDef, str]:
    """The plan's definition, validated by the workflows' validator (the same 422 paths), and its mode."""
    mode = body.get("mode") or "normal"
    if mode not in P.PLAN_MODES:
        raise ValidationFailed("unknown mode", details={"mode": [f"must be one of {list(P.PLAN_MODES)}"]})
    return workflows.parse(tools, P.definition(body)), mode


def _defaults(defn: WorkflowDef) -> dict[str, Any]:
    try:
        return validate_variables(defn, {})
    except ValidationFailed:  # a required variable: given at execute
        return {}


def create(
    session: Session,
    tools: ToolRegistry,
    workspace_id: str,
    defn: WorkflowDef,
    mode: str,
    actor: str,
    user_id: str | None,
) -> Execution:
    wf = workflows.create(session, tools, workspace_id, defn, actor, kind="plan")
    ex = Execution(
        workspace_id=workspace_id,
        workflow_id=wf.id,
        workflow_version=1,
        mode=mode,
        status=S.DRAFT,
        variables=_defaults(defn),
        started_by=user_id,
        steps={sid: StepState(sid) for sid in defn.step_ids},
        coaching_stats={k: 0 for k in executions.COACHING_STATS} if mode == "coaching" else None,
    )
    session.add(ex)
    session.flush()
    session.add(Plan(id=ex.id, workspace_id=workspace_id, created_by=actor))
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "plan_create",
        target_type="plan",
        target_id=ex.id,
        execution_id=ex.id,
        after={"name": defn.name, "steps": len(defn.steps), "mode": mode},
    )
    return ex


def get(session: Session, workspace_id: str, plan_id: str, *, for_update: bool = False) -> tuple[Plan, Execution]:
    plan = in_workspace(session, Plan, workspace_id, plan_id, "plan")
    return plan, executions.get(session, workspace_id, plan_id, for_update=for_update)


def list_page(
    session: Session,
    workspace_id: str,
    *,
    status: str | None = None,
    mode: str | None = None,
    created_by: str | None = None,
    page: int = 1,
    per_page: int = 20,
) -> tuple[list[tuple[Plan, Execution]], int]:
    where = [Plan.workspace_id == workspace_id]
    if status:
        where.append(Execution.status == status)
    if mode:
        where.append(Execution.mode == mode)
    if created_by:
        where.append(Plan.created_by == created_by)
    base = select(Plan, Execution).join(Execution, Execution.id == Plan.id).where(*where)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    rows = session.execute(
        base.order_by(Plan.created_at.desc(), Plan.id).offset((page - 1) * per_page).limit(per_page)
    ).all()
    return [(plan, ex) for plan, ex in rows], total


def verdicts(session: Session, tools: ToolRegistry, ex: Execution, defn: WorkflowDef) -> dict[str, str | None]:
    """The policy's verdict on each action step's call, its params rendered with the plan's variables; None when
    they cannot be rendered before the plan runs (they read earlier steps' outputs)."""
    state = executions.to_state(ex)
    out: dict[str, str | None] = {}
    for step in defn.steps:
        if step.type != "action":
            continue
        try:
            params = resolve_params(step, state)
        except TemplateFailure:
            out[step.id] = None
            continue
        out[step.id] = policies.for_step(session, tools, ex, step, params).effect
    return out


def approve(
    session: Session,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    plan_id: str,
    actor: str,
    role: str,
) -> tuple[Plan, Execution]:
    """A lead approves any draft plan; an operator one whose every call the policy allows as it stands."""
    plan, ex = get(session, workspace_id, plan_id, for_update=True)
    S.transition(ex.status, "approve_plan")
    judged = verdicts(session, tools, ex, definitions.for_execution(session, ex))
    needed = P.approver_role(judged.values())
    if RANK.get(role, -1) < RANK[needed]:
        held = sorted(k for k, v in judged.items() if v != "allow")
        raise Forbidden(
            f"approving this plan needs the {needed} role: the policy does not allow every call as it "
            f"stands ({', '.join(held)})",
            details={"role": role, "needs": needed, "verdicts": judged},
        )
    executions.set_status(ex, "approve_plan")
    plan.approver_role, plan.approved_by, plan.approved_at = needed, actor, utcnow()
    audit.record(
        session,
        workspace_id,
        actor,
        "plan_approve",
        target_type="plan",
        target_id=plan.id,
        execution_id=ex.id,
        before={"status": S.DRAFT},
        after={"status": ex.status, "needed_role": needed, "role": role, "verdicts": judged},
    )
    return plan, ex


def execute(
    session: Session,
    definitions: DefinitionCache,
    workspace_id: str,
    plan_id: str,
    actor: str,
    variables: Any = None,
    mode: str | None = None,
) -> tuple[Plan, Execution]:
    """An approved plan starts (a draft is 409: the table's `execute` needs `approved`); the runner takes it."""
    plan, ex = get(session, workspace_id, plan_id, for_update=True)
    S.transition(ex.status, "execute")
    if mode is not None and mode not in P.PLAN_MODES:
        raise ValidationFailed("unknown mode", details={"mode": [f"must be one of {list(P.PLAN_MODES)}"]})
    defn = definitions.for_execution(session, ex)
    ex.variables = validate_variables(defn, variables if variables is not None else ex.variables)
    if mode is not None and mode != ex.mode:
        ex.mode = mode
        ex.coaching_stats = {k: 0 for k in executions.COACHING_STATS} if mode == "coaching" else None
    executions.set_status(ex, "execute")
    audit.record(
        session,
        workspace_id,
        actor,
        "plan_execute",
        target_type="plan",
        target_id=plan.id,
        execution_id=ex.id,
        after={"mode": ex.mode, "variables": ex.variables},
    )
    return plan, ex


def save_as_workflow(
    session: Session, tools: ToolRegistry, workspace_id: str, plan_id: str, actor: str, name: str | None = None
) -> Workflow:
    """A new versioned workflow (version 1) with the plan's steps as they stand, its corrections included."""
    plan, ex = get(session, workspace_id, plan_id)
    source = workflows.version_row(session, workflow_of(session, ex.workflow_id), 1).definition
    source = with_overrides(source, (ex.control or {}).get("overrides"))
    defn = parse_definition({**source, "name": name or source["name"]}, tools)
    wf = workflows.create(session, tools, workspace_id, defn, actor)
    plan.saved_workflow_id = wf.id
    audit.record(
        session,
        workspace_id,
        actor,
        "plan_save",
        target_type="plan",
        target_id=plan.id,
        execution_id=ex.id,
        after={"workflow_id": wf.id, "name": wf.name},
    )
    return wf


def view(plan: Plan, ex: Execution, defn: WorkflowDef) -> dict[str, Any]:
    return {
        "plan_id": plan.id,
        "execution_id": ex.id,
        "status": ex.status,
        "mode": ex.mode,
        "name": defn.name,
        "description": defn.description,
        "variables": defn.source.get("variables") or {},
        "steps": defn.source["steps"],
        "values": ex.variables,
        "progress": steps_progress(ex.steps),
        "created_by": plan.created_by,
        "created_at": plan.created_at,
        "approved_by": plan.approved_by,
        "approved_at": plan.approved_at,
        "approver_role": plan.approver_role if plan.approved_by else None,
        "saved_workflow_id": plan.saved_workflow_id,
        "corrected_steps": sorted((ex.control or {}).get("overrides") or {}),
    }


def status(ex: Execution) -> dict[str, Any]:
    """GET /api/plans/<id>/status."""
    return {
        "plan_id": ex.id,
        "status": ex.status,
        "progress": steps_progress(ex.steps),
        "current_step": P.current_step(ex.steps.values(), ex.gate),
        "started_at": ex.started_at,
        "finished_at": ex.finished_at,
        "duration_s": P.duration_s(ex.started_at, ex.finished_at, utcnow()),
        "error": ex.error,
    }
