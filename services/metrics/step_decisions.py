"""The decisions behind a step's readiness (issue 31, item 7): its latest decisions, newest first, read through
the index of a step's decisions (migration 0026), never a scan."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.coaching.models import Decision, Suggestion
from services.workflows.models import Workflow


def latest(session: Session, wf: Workflow, step_id: str, limit: int = 50) -> list[dict[str, Any]]:
    """`step_id` may be an agent step's calls of one tool (`<agent step>:<tool>`): its agent step's decisions on
    that tool's calls."""
    owner, _, tool = step_id.partition(":")
    query = select(Decision).where(Decision.workspace_id == wf.workspace_id, Decision.workflow_id == wf.id,
                                   Decision.step_id == owner).order_by(Decision.created_at.desc())
    rows = session.scalars(query.limit(limit if not tool else limit * 4)).all()
    items = []
    for d in rows:
        if tool:
            sug = session.get(Suggestion, d.suggestion_id)
            if sug is None or sug.tool != tool:
                continue
        items.append({"decision_id": d.id, "suggestion_id": d.suggestion_id, "execution_id": d.execution_id,
                      "decision": d.decision, "operator": d.operator, "created_at": d.created_at,
                      "latency_ms": round(d.latency_ms or 0.0, 1), "outcome": d.outcome,
                      "counted": d.decision != "skip"})
        if len(items) >= limit:
            break
    return items
