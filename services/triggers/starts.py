"""An execution started by a trigger (a hook's delivery, a schedule's fire): started, recorded with its trigger
(TriggerStart) and audited (`execution_triggered`), in the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from config import Settings
from services.agents import llm_provider
from services.audit import service as audit
from services.executions import service as executions
from services.models.executions import Execution
from services.models.triggers import TriggerHook, TriggerSchedule, TriggerStart
from services.workflows import service as workflows
from services.workflows.service import DefinitionCache

TRIGGER_ACTION = "execution_triggered"


def definition(session: Session, definitions: DefinitionCache, workspace_id: str, workflow_id: str):
    """The workflow (NotFound when gone) and the definition of its current version: what a start runs."""
    wf = workflows.get(session, workspace_id, workflow_id)
    return wf, definitions.get(session, wf.id, wf.current_version)


def start(
    session: Session,
    definitions: DefinitionCache,
    settings: Settings,
    *,
    workspace_id: str,
    workflow_id: str,
    variables: dict[str, Any],
    mode: str | None,
    trigger: dict[str, Any],
) -> Execution:
    """Start the workflow for a trigger: {kind: webhook, hook_id, delivery_id, name} or {kind: schedule,
    schedule_id, fire_at, name}. Everything that can refuse the start (the workflow gone, variables that do not
    fit, an `auto` start of a workflow not in AUTO, an agent step without an LLM provider) raises before anything
    is added to the session."""
    _, defn = definition(session, definitions, workspace_id, workflow_id)
    llm_provider.require(session, settings, workspace_id, defn)
    actor = f"{trigger['kind']}:{trigger.get('hook_id') or trigger.get('schedule_id')}"
    ex = executions.start(
        session, definitions, workspace_id, workflow_id, variables, mode, started_by=None, actor=actor
    )
    session.add(
        TriggerStart(
            workspace_id=workspace_id,
            execution_id=ex.id,
            kind=trigger["kind"],
            name=trigger.get("name", ""),
            hook_id=trigger.get("hook_id"),
            delivery_id=trigger.get("delivery_id"),
            schedule_id=trigger.get("schedule_id"),
            fire_at=trigger.get("fire_at"),
        )
    )
    audit.record(
        session,
        workspace_id,
        actor,
        TRIGGER_ACTION,
        target_type="execution",
        target_id=ex.id,
        execution_id=ex.id,
        after={**trigger, "workflow_id": workflow_id, "mode": ex.mode},
    )
    return ex


def refused(session: Session, workspace_id: str, trigger: dict[str, Any], reason: str) -> None:
    """Audit a trigger whose start was refused (a schedule's fire whose workflow or variables no longer fit)."""
    actor = f"{trigger['kind']}:{trigger.get('hook_id') or trigger.get('schedule_id')}"
    audit.record(
        session,
        workspace_id,
        actor,
        TRIGGER_ACTION,
        target_type=trigger["kind"],
        target_id=trigger.get("hook_id") or trigger.get("schedule_id"),
        after={**trigger, "error": reason},
        result="refused",
    )


def of_execution(session: Session, execution_id: str) -> dict[str, Any] | None:
    """How an execution was started, when a trigger started it: {kind, name, hook_id, delivery_id, schedule_id,
    fire_at, at}; None for a start by a person or a script."""
    row = session.scalar(select(TriggerStart).where(TriggerStart.execution_id == execution_id))
    if row is None:
        return None
    name = row.name
    if row.hook_id:
        hook = session.get(TriggerHook, row.hook_id)
        name = hook.name if hook is not None else name
    elif row.schedule_id:
        schedule = session.get(TriggerSchedule, row.schedule_id)
        name = schedule.name if schedule is not None else name
    return {
        "kind": row.kind,
        "name": name,
        "hook_id": row.hook_id,
        "delivery_id": row.delivery_id,
        "schedule_id": row.schedule_id,
        "fire_at": _iso(row.fire_at),
        "at": _iso(row.created_at),
    }


def _iso(moment: datetime | None) -> str | None:
    return audit.iso(moment) if moment is not None else None
