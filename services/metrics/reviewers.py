"""Evidence from attentive reviews (issue #41, item 6): each operator's time to decide and their fast accepts, per
workflow or per step, from the decisions themselves (core/coaching/attention.py has the figures), with their check
figures (services/metrics/attention.py), under the workspace's settings (services/metrics/review_settings.py).

The decisions are read through the index of a step's decisions (workspace, workflow, step, created_at; migration
0026), one range per step over the last `days`: a workflow's reviewers read its steps one by one. Only coaching
decisions are stored one row each with their operator and latency (services/decisions/coaching.py: from when the
suggestion was made to the decision); an agent step's tool calls are among its step's decisions (a `<step>:<tool>`
scope reads one tool's), while approvals and the MCP gateway's reviews keep theirs in their approval row and are not
counted here. A decision held for its undo window counts from when it was made; one taken back is gone.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.agent.spec import resolve_tools
from core.coaching import attention as A
from core.coaching import checks as C
from core.errors import NotFound
from services.metrics import attention, review_settings
from services.metrics import service as metrics
from services.models.coaching import Decision, Suggestion
from services.models.workflows import Workflow
from services.orm import utcnow
from services.workflows import service as workflows

DEFAULT_DAYS = 30
MAX_DAYS = 365
SUGGESTED = ("action", "agent")  # the step types a person decides suggestions of


# -- the reviewers' figures -----------------------------------------------------------------------------------------


def scopes(session: Session, wf: Workflow) -> list[str]:
    """The scopes a workflow's reviewers can be read for: its current version's tool and agent steps, then every
    other step (an older version's) or agent tool (`<step>:<tool>`) with counted decisions, in that order."""
    written = [s for s in workflows.version_row(session, wf).definition.get("steps") or [] if isinstance(s, dict)]
    out = [s["id"] for s in written if (s.get("type") or "action") in SUGGESTED and isinstance(s.get("id"), str)]
    prefix = f"{wf.id}/"
    counted = sorted(key[len(prefix) :] for key in metrics.load_many(session, wf.workspace_id, "step", prefix=prefix))
    return out + [key for key in counted if key not in out]


def _check_scope(session: Session, wf: Workflow, step_id: str, known: list[str]) -> None:
    if step_id in known:
        return
    owner, _, tool = step_id.partition(":")
    if tool:  # an agent step's calls of a tool it may call, before any of them was decided
        written = {
            s.get("id"): s
            for s in workflows.version_row(session, wf).definition.get("steps") or []
            if isinstance(s, dict)
        }
        step = written.get(owner)
        if step is not None and step.get("type") == "agent" and resolve_tools(step.get("tools") or [], [tool]):
            return
    raise NotFound(
        f"workflow {wf.id} has no step {step_id!r} whose suggestions a person decides",
        details={"step_id": step_id, "steps": known},
    )


def _decisions(session: Session, wf: Workflow, step_id: str, since) -> list[tuple[str, str, float, str | None]]:
    owner, _, tool = step_id.partition(":")
    query = select(Decision.operator, Decision.decision, Decision.latency_ms, Decision.outcome).where(
        Decision.workspace_id == wf.workspace_id,
        Decision.workflow_id == wf.id,
        Decision.step_id == owner,
        Decision.created_at >= since,
    )
    if tool:
        query = query.join(Suggestion, Suggestion.id == Decision.suggestion_id).where(Suggestion.tool == tool)
    return [
        (operator, decision, latency_ms, outcome) for operator, decision, latency_ms, outcome in session.execute(query)
    ]


def figures(session: Session, wf: Workflow, step_id: str | None = None, days: int = DEFAULT_DAYS) -> dict[str, Any]:
    """GET /api/metrics/workflows/<id>/reviewers: each operator's figures over the workflow's (or one step's)
    decisions of the last `days`, under the workspace's floor, and their check figures across the workspace
    (services/metrics/attention.py). A check's decision is none of the workflow's decisions: an operator who decided
    only checks here is listed with no decisions."""

    known = scopes(session, wf)
    if step_id is not None:
        _check_scope(session, wf, step_id, known)
    since = utcnow() - timedelta(days=days)
    read = [step_id] if step_id is not None else [s for s in known if ":" not in s]
    rows = [row for s in read for row in _decisions(session, wf, s, since)]
    counted = [(who, kind, ms) for who, kind, ms, outcome in rows if outcome not in C.DECISION_OUTCOMES]
    settings = review_settings.get_floor(session, wf.workspace_id)
    items = {r["operator"]: r for r in A.reviewers(counted, settings["attentive_floor_ms"])}
    for who, _, _, _outcome in rows:
        if who not in items:
            items[who] = A.reviewer(who, [], settings["attentive_floor_ms"])
    found = attention.operator_figures(session, wf.workspace_id, sorted(items), settings)
    return {
        "workflow_id": wf.id,
        "step_id": step_id,
        "days": days,
        "since": since,
        "floor_ms": settings["attentive_floor_ms"],
        "scopes": known,
        "decisions": len(counted),
        "evidence_from": settings["evidence_from"],
        "items": [{**items[who], "checks": found[who]} for who in sorted(items)],
    }
