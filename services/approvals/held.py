"""Holding an approval's settling decision for the undo window (core/coaching/undo.py; docs/web-app.md "Undo").

Every approval is a checkpoint someone asked for (the queue asks for a confirming key before approving one), so
the decision that settles an execution's approval (approved, rejected; a gateway call's review never: its agent
waits) is held while the workspace's window runs: the approval is decided (no one else decides it, the queue drops
it), but its execution still waits, at a gate `{kind: "held", approval_id, step_id, decision, operator, deadline,
reopen, params_before}`, and nothing is counted. The deadline scanner then settles it
(services.decisions.approval_undo); before that, the person who decided may take it back.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from core.coaching import undo as U
from services.models.approvals import Approval
from services.models.executions import Execution
from services.models.undo import WorkspaceUndo


def window(session: Session, workspace_id: str, default_s: float) -> float:
    """The workspace's undo window: its own, or the server's COACH_UNDO_WINDOW_S."""
    own = session.get(WorkspaceUndo, workspace_id)
    return max(0.0, own.window_s if own is not None else default_s)


def hold(
    ex: Execution, a: Approval, decision: str, operator: str, now: datetime, window_s: float, params_before: Any
) -> str:
    """The execution waits at the held gate until the window ends; returns its end (ISO)."""
    until = (now + timedelta(seconds=window_s)).isoformat()
    ex.gate = {
        "kind": U.HELD,
        "step_id": a.step_id,
        "approval_id": a.id,
        "decision": decision,
        "operator": operator,
        "deadline": until,
        "timeout_s": window_s,
        "reopen": ex.gate,
        **({"params_before": params_before} if decision == "edit" else {}),
    }
    return until


def held_approval(ex: Execution) -> str | None:
    """The approval whose decision the execution's gate holds, if any."""
    gate = ex.gate or {}
    return gate.get("approval_id") if gate.get("kind") == U.HELD else None
