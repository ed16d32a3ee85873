"""Workflow definitions: create, version, read, delete. Functions take the session first (Dispatch style)."""

from __future__ import annotations

import json
import threading
from typing import Any

from cachetools import LRUCache
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core import gates
from core.coaching import autonomy
from core.errors import NotFound
from core.execution.control import with_overrides
from core.tools import ToolRegistry
from core.workflow import WorkflowDef, parse_definition
from services.audit import service as audit
from services.models.workflows import Workflow, WorkflowVersion
from services.offload import off_loop
from services.orm import utcnow


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
    """A version of the workflow as written, with its modes (the API's view adds its levels:
    services/autonomy/service.py view)."""
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
    }
