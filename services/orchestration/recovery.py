"""Recovery of a failed execution: retry its failed step (same or edited params), resume from a step that has not run,
re-run it as a new execution. The rules are core/execution/recovery.py; each function runs in the caller's
transaction, audits what it did and adds the events to push after it. The caller schedules the runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import Conflict, ValidationFailed
from core.execution import control as C
from core.execution import recovery as R
from core.execution import states as S
from core.execution.engine import template_context
from core.templating import TemplateFailure, render_value
from core.tools import ToolRegistry
from core.workflow import parse_definition
from services.audit import service as audit
from services.executions import service as executions
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.plans import Plan
from services.models.workflows import Workflow
from services.orm import utcnow
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache

UNCHANGED = object()  # retry: the params as they are


def _edited(
    session: Session, definitions: DefinitionCache, tools: ToolRegistry, ex: Execution, step_id: str, params: Any
) -> tuple[Any, dict]:
    """(the params before, the control record's overrides with the step's new params), once the new params are
    rendered as they will run and checked against the tool's schema (422 naming `params.<field>`)."""
    defn = definitions.for_execution(session, ex)
    step = defn.step(step_id)
    if step.type != "action":
        raise ValidationFailed(
            f"step {step_id!r} is a {step.type} step: only an action step's tool params can be changed",
            details={"params": [f"step {step_id!r} has no tool params to change"]},
        )
    tool = tools.get(step.tool or "")
    if tool is None:
        raise Conflict(f"tool {step.tool!r} is not registered on this server", details={"tool": step.tool})
    if not isinstance(params, dict):
        raise ValidationFailed("params must be an object", details={"params": ["must be an object"]})
    try:
        rendered = render_value(params, template_context(executions.to_state(ex)))
    except TemplateFailure as exc:
        raise ValidationFailed(
            f"the edited params do not render: {exc}", details={exc.path or "params": [exc.message]}
        ) from None
    problems = R.params_problems(tool.params_schema, rendered)
    if problems:
        listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in problems.items())
        raise ValidationFailed(f"the edited params do not fit tool {tool.name!r}: {listed}", details=problems)
    raw = [s for s in defn.source["steps"] if isinstance(s, dict)]
    index = next(i for i, s in enumerate(raw) if s.get("id") == step_id)
    after = {**raw[index], "params": params}
    try:
        parse_definition(C.with_overrides(defn.source, {step_id: after}), tools.lenient())
    except ValidationFailed as exc:
        prefix = f"steps[{index}]."
        raise ValidationFailed(
            "the edited params are invalid",
            details={(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in exc.details.items()},
        ) from None
    overrides = {**((ex.control or {}).get("overrides") or {}), step_id: after}
    return raw[index].get("params"), overrides


def _reopen(ex: Execution) -> None:
    ex.error = None
    ex.gate = None
    ex.finished_at = None
    executions.set_status(ex, "recover")


def retry(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    params: Any,
    actor: str,
) -> Execution:
    """The failed step runs again: a new run of its tool with a new idempotency key (its key is cleared; the runner
    numbers the run), with `params` in place of its own when given (for this execution only)."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    st = R.check_retry(ex.status, ex.steps, step_id)
    failed = {
        "status": st.status,
        "error": st.error,
        "run": st.run,
        "attempts": st.attempts,
        "idempotency_key": st.idempotency_key,
        "params": st.params,
    }
    before = after = None
    control = ex.control
    if params is not UNCHANGED:
        before, overrides = _edited(session, definitions, tools, ex, step_id, params)
        after = params
        control = {**(control or {}), "overrides": overrides}
    now = utcnow()
    ex.control = R.with_entry(
        control,
        R.retry_entry(
            "retry",
            step_id,
            actor,
            now.isoformat(),
            error=st.error,
            run=st.run,
            params_before=before,
            params_after=after,
        ),
    )
    for sug in session.scalars(
        select(Suggestion).where(Suggestion.execution_id == ex.id, Suggestion.status == "pending")
    ):
        sug.status = "superseded"
    executions.set_step(
        ex,
        step_id,
        status=S.STEP_PENDING,
        error=None,
        output=None,
        attempts=0,
        decision=None,
        params=None,
        policy=None,
        started_at=None,
        finished_at=None,
        idempotency_key=None,
    )
    _reopen(ex)
    audit.record(
        session,
        workspace_id,
        actor,
        "retry",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before=failed,
        after={
            "step_id": step_id,
            "edited": after is not None,
            "params": after,
            "params_before": before,
            "next_run": st.run + 1,
        },
        result="edited" if after is not None else "same",
    )
    executions.changed(uow, ex, step_id)
    return ex


def resume_from(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    actor: str,
) -> Execution:
    """Go on from a step that has not run: the failed steps, and those it waits for that have not run, are
    skipped (each saying why)."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    defn = definitions.for_execution(session, ex)
    skips = R.resume_skips(defn, ex.status, ex.steps, step_id)
    errors = {sid: ex.steps[sid].error for sid in skips if ex.steps[sid].error}
    now = utcnow()
    for sid in skips:
        executions.set_step(
            ex,
            sid,
            status=S.STEP_SKIPPED,
            finished_at=now,
            error=f"{actor} resumed the execution from step {step_id!r}",
        )
    ex.control = R.with_entry(
        ex.control,
        R.retry_entry(
            "resume_from", step_id, actor, now.isoformat(), error=(ex.error or {}).get("message"), skipped=skips
        ),
    )
    _reopen(ex)
    audit.record(
        session,
        workspace_id,
        actor,
        "resume_from",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before={"errors": errors},
        after={"step_id": step_id, "skipped": skips},
        result="resumed",
    )
    executions.changed(uow, ex, step_id)
    return ex


def rerun(
    session: Session,
    definitions: DefinitionCache,
    workspace_id: str,
    execution_id: str,
    variables: Any,
    actor: str,
    user_id: str | None,
    require: Callable[[str], None],
) -> tuple[Execution, Execution]:
    """A new execution of the same workflow (its current version) with the old one's variables, or `variables`
    instead; in the workflow's mode, or normal again for a normal run (which needs the lead role, as starting one
    does: `require`). Linked both ways in the control records. Returns (old, new)."""
    old = executions.get(session, workspace_id, execution_id, for_update=True)
    R.check_rerun(old.status)
    if session.get(Plan, old.id) is not None:
        raise Conflict(
            "a plan is not re-run: make a new plan, or save this one as a workflow and start that",
            details={"plan_id": old.id},
        )
    mode = "normal" if old.mode == "normal" else None
    require("lead" if mode == "normal" else "operator")
    wf = session.get(Workflow, old.workflow_id)
    if wf is None or wf.deleted_at is not None:
        raise Conflict(
            "this execution's workflow was deleted: there is nothing to re-run",
            details={"workflow_id": old.workflow_id},
        )
    new = executions.start(
        session,
        definitions,
        workspace_id,
        old.workflow_id,
        old.variables if variables is None else variables,
        mode,
        started_by=user_id,
        actor=actor,
    )
    new.control = {"rerun_of": old.id}
    old.control = {**(old.control or {}), "reruns": [*((old.control or {}).get("reruns") or []), new.id]}
    audit.record(
        session,
        workspace_id,
        actor,
        "rerun",
        target_type="execution",
        target_id=old.id,
        execution_id=old.id,
        before={"status": old.status, "variables": old.variables},
        after={
            "execution_id": new.id,
            "variables": new.variables,
            "mode": new.mode,
            "workflow_version": new.workflow_version,
        },
        result="started",
    )
    return old, new
