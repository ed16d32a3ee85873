"""Holding a decision on a risky call for the undo window (core/coaching/undo.py has the rules): the window a
workspace uses, and the held gate a decision opens instead of acting. Releasing and undoing are in
services/decisions/undo.py, after the decision path (services/decisions/coaching.py), which calls `window` and `hold`.

A held decision is stored as a Decision row (so a second decision is still 409, and an Idempotency-Key replays it),
its suggestion's status is `held` (so it leaves the work queue) and the execution waits at a gate
`{kind: "held", step_id, suggestion_id, decision, operator, deadline, timeout_s, reopen}` whose deadline is the end
of the window: the runner's deadline scanner releases it then (services.orchestration.scans). `reopen` is the gate the
suggestion had, which an undo puts back as it was.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from core.coaching import undo as U
from core.errors import NotFound, ValidationFailed
from core.tools import ToolRegistry
from services.audit import service as audit
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.undo import WorkspaceUndo
from services.models.users import Workspace


def window(session: Session, tools: ToolRegistry, sug: Suggestion, workspace_id: str, default_s: float) -> float:
    """The seconds a decision on `sug` is held (0: it acts at once). A call that is not risky costs no statement;
    a risky one reads the workspace's own window, if it set one."""
    tool = tools.get(sug.tool or "") if sug.tool else None
    if not U.holds(1.0, sug.kind or "step", tool.risk if tool else None, sug.policy):
        return 0.0
    own = session.get(WorkspaceUndo, workspace_id)
    return max(0.0, own.window_s if own is not None else default_s)


def hold(ex: Execution, sug: Suggestion, kind: str, operator: str, now: datetime, window_s: float) -> str:
    """Hold the decision `kind` on `sug` for `window_s`: the suggestion is `held`, the execution waits at the held
    gate (its status does not change: it still waits for the decision to act). Returns the end of the window (ISO)."""
    until = (now + timedelta(seconds=window_s)).isoformat()
    sug.status = U.HELD
    ex.gate = {
        "kind": U.HELD,
        "step_id": sug.step_id,
        "suggestion_id": sug.id,
        "decision": kind,
        "operator": operator,
        "deadline": until,
        "timeout_s": window_s,
        "reopen": ex.gate,
    }
    return until


def is_held(ex: Execution) -> bool:
    return (ex.gate or {}).get("kind") == U.HELD


# -- the workspace's setting ----------------------------------------------------------------------------------------


def get_setting(session: Session, workspace_id: str, default_s: float) -> dict[str, Any]:
    own = session.get(WorkspaceUndo, workspace_id)
    return {
        "window_s": own.window_s if own is not None else default_s,
        "default_s": default_s,
        "workspace": own is not None,
    }


def set_setting(
    session: Session, workspace_id: str, window_s: float | None, default_s: float, actor: str
) -> dict[str, Any]:
    """Set the workspace's window (None: back to the server's default), audited."""
    if window_s is not None and not 0 <= window_s <= U.MAX_WINDOW_S:
        raise ValidationFailed(
            "the undo window is out of range",
            details={"window_s": [f"must be between 0 and {U.MAX_WINDOW_S:g} seconds"]},
        )
    if session.get(Workspace, workspace_id) is None:
        raise NotFound(f"workspace {workspace_id} not found")
    before = get_setting(session, workspace_id, default_s)
    own = session.get(WorkspaceUndo, workspace_id)
    if window_s is None:
        if own is not None:
            session.delete(own)
    elif own is None:
        session.add(WorkspaceUndo(workspace_id=workspace_id, window_s=window_s, updated_by=actor))
    else:
        own.window_s, own.updated_by = window_s, actor
    session.flush()
    after = get_setting(session, workspace_id, default_s)
    audit.record(
        session,
        workspace_id,
        actor,
        "undo_window",
        target_type="workspace",
        target_id=workspace_id,
        before=before,
        after=after,
        result="ok",
    )
    return after
