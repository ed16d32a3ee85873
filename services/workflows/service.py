"""Workflow definitions: create, version, read, delete. Functions take the session first (Dispatch style)."""

from __future__ import annotations

import json
import threading
from typing import Any

from cachetools import LRUCache
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core import gates
from core.agent.spec import resolve_tools
from core.coaching import autonomy
from core.coaching.levels import LevelThresholds
from core.errors import Conflict, NotFound, ValidationFailed
from core.execution.control import with_overrides
from core.tools import ToolRegistry
from core.workflow import WorkflowDef, parse_definition
from services.audit import service as audit
from services.metrics import service as metrics
from services.notifier import Events
from services.offload import off_loop
from services.orm import utcnow
from services.workflows.models import Workflow, WorkflowVersion


class DefinitionCache:
    """Parsed definitions by (workflow, version). Versions never change, so entries never go stale."""

    def __init__(self, tools: ToolRegistry, size: int = 512):
        self.tools = tools
        self.size = size
        self._items: LRUCache[tuple, WorkflowDef] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, session: Session, workflow_id: str, version: int) -> WorkflowDef:
        key = (workflow_id, version)
        with self._lock:
            found = self._items.get(key)  # cachetools' LRU: a read counts as a use
        if found is not None:
            return found
        row = session.scalar(
            select(WorkflowVersion).where(
                WorkflowVersion.workflow_id == workflow_id, WorkflowVersion.version == version
            )
        )
        if row is None:
            raise NotFound(f"workflow {workflow_id} has no version {version}")
        defn = parse_definition(row.definition, self.tools.lenient())
        self._put(key, defn)
        return defn

    def _put(self, key: tuple, defn: WorkflowDef) -> None:
        with self._lock:
            self._items[key] = defn

    def for_execution(self, session: Session, ex) -> WorkflowDef:
        """The definition an execution runs: its version's, with the steps corrected for this execution alone
        (core/execution/control.py). An execution without corrections costs one attribute read more."""
        base = self.get(session, ex.workflow_id, ex.workflow_version)
        overrides = (ex.control or {}).get("overrides")
        if not overrides:
            return base
        key = (ex.workflow_id, ex.workflow_version, ex.id, json.dumps(overrides, sort_keys=True, default=str))
        with self._lock:
            found = self._items.get(key)
        if found is not None:
            return found
        defn = parse_definition(with_overrides(base.source, overrides), self.tools.lenient())
        self._put(key, defn)
        return defn


def get(session: Session, workspace_id: str, workflow_id: str) -> Workflow:
    wf = session.get(Workflow, workflow_id)
    # a plan's hidden workflow is reached through its plan (services/plans/service.py), never as a workflow
    if wf is None or wf.workspace_id != workspace_id or wf.deleted_at is not None or wf.kind != "workflow":
        raise NotFound(f"workflow {workflow_id} not found")
    return wf


def version_row(session: Session, wf: Workflow, version: int | None = None) -> WorkflowVersion:
    row = session.scalar(
        select(WorkflowVersion).where(
            WorkflowVersion.workflow_id == wf.id, WorkflowVersion.version == (version or wf.current_version)
        )
    )
    if row is None:
        raise NotFound(f"workflow {wf.id} has no version {version}")
    return row


def parse(tools: ToolRegistry, data: Any) -> WorkflowDef:
    """Validate a submitted definition off the event loop (services.offload), before any transaction: parsing
    large templates takes long. create/update take the result."""
    return off_loop(parse_definition, data, tools)


def _parsed(data: Any, tools: ToolRegistry) -> WorkflowDef:
    return data if isinstance(data, WorkflowDef) else parse_definition(data, tools)


def create(
    session: Session, tools: ToolRegistry, workspace_id: str, data: Any, actor: str = "system", kind: str = "workflow"
) -> Workflow:
    """`data`: the submitted definition, or what `parse` made of it. `kind` plan: a plan's hidden workflow
    (services/plans/service.py), audited as the plan's creation instead."""
    defn = _parsed(data, tools)
    wf = Workflow(workspace_id=workspace_id, name=defn.name, description=defn.description, current_version=1, kind=kind)
    session.add(wf)
    session.flush()
    session.add(WorkflowVersion(workflow_id=wf.id, version=1, definition=defn.source))
    session.flush()
    if kind == "workflow":
        audit.record(
            session,
            workspace_id,
            actor,
            "workflow_create",
            target_type="workflow",
            target_id=wf.id,
            after={"name": wf.name, "version": 1},
        )
    return wf


def update(
    session: Session, tools: ToolRegistry, workspace_id: str, workflow_id: str, data: Any, actor: str = "system"
) -> Workflow:
    """A PUT makes a new version; executions already started keep theirs."""
    wf = get(session, workspace_id, workflow_id)
    defn = _parsed(data, tools)
    wf.current_version += 1
    wf.name, wf.description, wf.updated_at = defn.name, defn.description, utcnow()
    session.add(WorkflowVersion(workflow_id=wf.id, version=wf.current_version, definition=defn.source))
    session.flush()
    audit.record(
        session,
        workspace_id,
        actor,
        "workflow_update",
        target_type="workflow",
        target_id=wf.id,
        before={"version": wf.current_version - 1},
        after={"version": wf.current_version},
    )
    return wf


def delete(session: Session, workspace_id: str, workflow_id: str, actor: str = "system") -> None:
    """Soft delete: executions that ran it still show which definition they ran."""
    wf = get(session, workspace_id, workflow_id)
    wf.deleted_at = utcnow()
    audit.record(session, workspace_id, actor, "workflow_delete", target_type="workflow", target_id=wf.id)


def list_page(session: Session, workspace_id: str, page: int, per_page: int) -> tuple[list[Workflow], int]:
    where = (Workflow.workspace_id == workspace_id, Workflow.deleted_at.is_(None), Workflow.kind == "workflow")
    total = session.scalar(select(func.count()).select_from(Workflow).where(*where)) or 0
    rows = session.scalars(
        select(Workflow)
        .where(*where)
        .order_by(Workflow.created_at.desc(), Workflow.id)
        .offset((page - 1) * per_page)
        .limit(per_page)
    ).all()
    return list(rows), total


def names(session: Session, workflow_ids) -> dict[str, str]:
    """Workflow id -> name, in one query (a list of executions shows which workflow each ran)."""
    ids = set(workflow_ids)
    if not ids:
        return {}
    rows = session.execute(select(Workflow.id, Workflow.name).where(Workflow.id.in_(ids)))
    return {wf_id: name for wf_id, name in rows}


def view(session: Session, wf: Workflow, version: int | None = None) -> dict[str, Any]:
    row = version_row(session, wf, version)
    d = row.definition
    return {
        "id": wf.id,
        "version": row.version,
        "latest_version": wf.current_version,
        "name": d["name"],
        "description": d.get("description") or "",
        "variables": d.get("variables") or {},
        "steps": d["steps"],
        # the workflow's default deadline on human gates, as written (core.gates), so an editor keeps it
        **{k: d[k] for k in gates.KEYS if k in d},
        "mode": wf.mode,
        "step_modes": autonomy.step_modes(wf.settings),
        "created_at": wf.created_at,
        "updated_at": wf.updated_at,
        **{k: v for k, v in level_of(session, wf).items()},
    }


def level_of(session: Session, wf: Workflow) -> dict[str, Any]:
    limits = metrics.workflow_thresholds(wf)
    snap = metrics.load(session, wf.workspace_id, "workflow", wf.id, limits).snapshot()
    return {"level": snap["level"], "auto_ready": snap["auto_ready"], "thresholds": limits.to_dict()}


def set_mode(
    session: Session,
    workspace_id: str,
    workflow_id: str,
    mode: str,
    *,
    force: bool = False,
    actor: str = "system",
    events: Events | None = None,
    reason: str | None = None,
) -> Workflow:
    """Promote to AUTO (only when the evidence says AUTO-ready, unless forced) or demote to coaching; a change
    is audited and pushed to the workspace's dashboards as `workflow_level_changed` (with the new mode), as a
    demotion by spot checks is."""
    if mode not in ("coaching", "auto"):
        raise ValidationFailed("unknown mode", details={"mode": ["must be 'coaching' or 'auto'"]})
    wf = get(session, workspace_id, workflow_id)
    promoting = mode == "auto" and wf.mode != "auto"
    reason = autonomy.check_force(force and promoting, reason)
    if promoting and not force:
        level = level_of(session, wf)
        if not level["auto_ready"]:
            raise Conflict(
                "this workflow is not AUTO-ready yet", details={"level": level["level"], "auto_ready": False}
            )
    before = wf.mode
    wf.mode, wf.updated_at = mode, utcnow()
    if before != mode:
        level = level_of(session, wf)
        extra: dict[str, Any] = {"reason": reason} if reason else {}
        if mode == "auto":  # which of its steps have no evidence of their own yet: the lead was shown them
            extra["steps_not_ready"] = not_ready_steps(session, wf)
        recorded = audit.record(
            session,
            workspace_id,
            actor,
            "promotion" if mode == "auto" else "demotion",
            target_type="workflow",
            target_id=wf.id,
            before={"mode": before},
            after={"mode": mode, "forced": force, **level, **extra},
        )
        if events is not None:
            events.add(
                "workflow_level_changed",
                {
                    "workflow_id": wf.id,
                    "level": level["level"],
                    "previous_level": level["level"],
                    "auto_ready": level["auto_ready"],
                    "mode": mode,
                    "previous_mode": before,
                    "reason": f"{'promoted' if mode == 'auto' else 'demoted'} by {actor}"
                    + (" (forced)" if force else ""),
                    "audit_seq": recorded.seq,
                },
                workspace=workspace_id,
            )
    return wf


def not_ready_steps(session: Session, wf: Workflow) -> list[dict[str, Any]]:
    """The tool and agent steps of the workflow's current version that are not AUTO-ready on their own evidence
    (core.coaching.autonomy.steps_not_ready), in the definition's order."""
    written = [s for s in version_row(session, wf).definition.get("steps") or [] if isinstance(s, dict)]
    tool_steps = [s["id"] for s in written if (s.get("type") or "action") in ("action", "agent")]
    steps = metrics.workflow_view(session, wf)["steps"]
    return autonomy.steps_not_ready(steps, tool_steps, autonomy.step_modes(wf.settings))


def set_step_mode(
    session: Session,
    workspace_id: str,
    workflow_id: str,
    step_id: str,
    mode: str,
    *,
    force: bool = False,
    actor: str = "system",
    events: Events | None = None,
    reason: str | None = None,
) -> Workflow:
    """Promote one step to AUTO (only when its own evidence says AUTO-ready, unless forced), set it back to
    coaching (it follows its workflow again), or pin it to always_review (core.coaching.autonomy). A change
    is audited and pushed to the workspace's dashboards as `workflow_level_changed` with the step's id."""
    wf = get(session, workspace_id, workflow_id)
    written = {s["id"]: s for s in version_row(session, wf).definition["steps"] if isinstance(s, dict)}
    types = {k: s.get("type") or "action" for k, s in written.items()}
    # `<agent step>:<tool>`: the calls of one tool by an agent step, which have their own evidence and mode
    owner, _, tool = step_id.partition(":")
    if tool and types.get(owner) == "agent":
        if not resolve_tools(written[owner].get("tools") or [], [tool]):
            raise NotFound(
                f"agent step {owner!r} does not call tool {tool!r}",
                details={"step_id": step_id, "tools": written[owner].get("tools")},
            )
    elif step_id not in types:
        raise NotFound(
            f"workflow {workflow_id} has no step {step_id!r} in its current version",
            details={"step_id": step_id, "steps": list(types)},
        )
    elif types[step_id] not in ("action", "agent"):
        raise Conflict(
            f"step {step_id!r} is a {types[step_id]} step: only tool steps and agent steps are "
            "suggested, so only they have a mode",
            details={"step_id": step_id, "type": types[step_id]},
        )
    before = autonomy.step_modes(wf.settings).get(step_id, autonomy.COACHING)
    reason = autonomy.check_force(force and mode == autonomy.AUTO and before != autonomy.AUTO, reason)
    level = step_level(session, wf, step_id)
    autonomy.check_step_mode(before, mode, auto_ready=level["auto_ready"], force=force)
    if before == mode:
        return wf
    wf.settings, wf.updated_at = autonomy.with_step_mode(wf.settings, step_id, mode), utcnow()
    action = {"auto": "step_promotion", "always_review": "step_pin"}.get(mode, "step_demotion")
    recorded = audit.record(
        session,
        workspace_id,
        actor,
        action,
        target_type="step",
        target_id=f"{wf.id}/{step_id}",
        before={"mode": before},
        after={"mode": mode, "forced": force, **level, **({"reason": reason} if reason else {})},
    )
    if events is not None:
        events.add(
            "workflow_level_changed",
            {
                "workflow_id": wf.id,
                "step_id": step_id,
                "level": level["level"],
                "previous_level": level["level"],
                "auto_ready": level["auto_ready"],
                "mode": mode,
                "previous_mode": before,
                "workflow_mode": wf.mode,
                "reason": f"step set to {mode} by {actor}" + (" (forced)" if force else ""),
                "audit_seq": recorded.seq,
            },
            workspace=workspace_id,
        )
    return wf


def step_level(session: Session, wf: Workflow, step_id: str) -> dict[str, Any]:
    limits = metrics.workflow_thresholds(wf)
    snap = metrics.load(session, wf.workspace_id, "step", f"{wf.id}/{step_id}", limits).snapshot()
    return {"level": snap["level"], "auto_ready": snap["auto_ready"]}


def set_thresholds(
    session: Session, workspace_id: str, workflow_id: str, values: dict[str, Any], actor: str = "system"
) -> Workflow:
    wf = get(session, workspace_id, workflow_id)
    try:
        merged = LevelThresholds.from_dict({**metrics.workflow_thresholds(wf).to_dict(), **values})
    except (TypeError, ValueError) as exc:
        # the schema checks each field alone; what fails here is a combination (auto_min_window > window),
        # so name the fields the client sent: those are the ones it can change (docs/api.md)
        raise ValidationFailed(
            "thresholds are invalid", details={name: [str(exc)] for name in values} or {"thresholds": [str(exc)]}
        ) from None
    before = metrics.workflow_thresholds(wf).to_dict()
    wf.settings = {**(wf.settings or {}), "thresholds": merged.to_dict()}
    audit.record(
        session,
        workspace_id,
        actor,
        "thresholds_change",
        target_type="workflow",
        target_id=wf.id,
        before=before,
        after=merged.to_dict(),
    )
    return wf
