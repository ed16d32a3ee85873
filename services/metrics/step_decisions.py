"""The decisions behind a step's (or a workflow's) readiness (issue 31, item 7; issue 40, item 19): the latest
decisions, newest first, read through the index of a step's decisions (migration 0026), never a scan, each with
what it did to the scope's promotion evidence (core/coaching/trail.py)."""

from __future__ import annotations

import heapq
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.coaching.trail import evidence_trail
from core.coaching.undo import HELD
from services.metrics import service as metrics
from services.models.coaching import Decision, Suggestion, not_a_check
from services.models.workflows import Workflow


def _row(d: Decision) -> dict[str, Any]:
    return {
        "decision_id": d.id,
        "suggestion_id": d.suggestion_id,
        "execution_id": d.execution_id,
        "step_id": d.step_id,
        "decision": d.decision,
        "operator": d.operator,
        "created_at": d.created_at,
        "latency_ms": round(d.latency_ms or 0.0, 1),
        "outcome": d.outcome,
        # left_out: by an operator below the lead's bars, where only attentive operators' decisions are evidence
        "counted": d.decision != "skip" and d.evidence != "left_out",
        "attentive": d.evidence == "attentive",
    }


def _with_trail(session: Session, wf: Workflow, scope: str, key: str, items: list[dict[str, Any]]) -> list[dict]:
    state = metrics.load(session, wf.workspace_id, scope, key, metrics.workflow_thresholds(wf))
    t, e = state.thresholds, state.evidence
    # a decision held for its undo window is stored but not counted yet (core/coaching/undo.py)
    held = (
        set(
            session.scalars(
                select(Suggestion.id).where(
                    Suggestion.id.in_([i["suggestion_id"] for i in items]), Suggestion.status == HELD
                )
            )
        )
        if items
        else set()
    )
    counted = [i for i in items if i["suggestion_id"] not in held and (i["counted"] or i["decision"] == "skip")]
    trail = evidence_trail(e.accepted, e.counted, [i["decision"] for i in counted], t.auto_acceptance, t.auto_alpha)
    for item in items:
        item["evidence"] = None
    for item, effect in zip(counted, trail, strict=False):
        item["evidence"] = effect
    return items


def _step_rows(session: Session, wf: Workflow, step_id: str, limit: int) -> list[Decision]:
    query = (
        select(Decision)
        .where(
            Decision.workspace_id == wf.workspace_id,
            Decision.workflow_id == wf.id,
            Decision.step_id == step_id,
            not_a_check(),
        )
        .order_by(Decision.created_at.desc())
    )
    return list(session.scalars(query.limit(limit)))


def latest(session: Session, wf: Workflow, step_id: str, limit: int = 50) -> list[dict[str, Any]]:
    """`step_id` may be an agent step's calls of one tool (`<agent step>:<tool>`): its agent step's decisions on
    that tool's calls."""
    owner, _, tool = step_id.partition(":")
    items = []
    for d in _step_rows(session, wf, owner, limit if not tool else limit * 4):
        if tool:
            sug = session.get(Suggestion, d.suggestion_id)
            if sug is None or sug.tool != tool:
                continue
        items.append(_row(d))
        if len(items) >= limit:
            break
    return _with_trail(session, wf, "step", f"{wf.id}/{step_id}", items)


def latest_of_workflow(session: Session, wf: Workflow, limit: int = 20) -> list[dict[str, Any]]:
    """The workflow's latest decisions over all its steps (its evidence pools them), newest first: each step's
    latest through the step index, merged."""
    prefix = f"{wf.id}/"  # the steps that have decisions have a metrics row (the tools of agent steps: `:`)
    steps = [
        key[len(prefix) :]
        for key in metrics.load_many(session, wf.workspace_id, "step", prefix=prefix)
        if ":" not in key
    ]
    rows = heapq.nlargest(
        limit, (d for s in steps for d in _step_rows(session, wf, s, limit)), key=lambda d: (d.created_at, d.id)
    )
    return _with_trail(session, wf, "workflow", wf.id, [_row(d) for d in rows])
