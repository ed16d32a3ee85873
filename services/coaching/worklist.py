"""The operator's work list: the workspace's pending suggestions and the questions its executions wait on
(a human_input step, a pause for clarification), filtered and ordered as the queue page asks.

Filters are SQL, so paging stays right: workflow, step, kind (a suggestion's purpose), age (a band of seconds since
the item was opened), and a search over the workflow's name, the step, the tool and the run's variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import String, cast, func, or_, select
from sqlalchemy.orm import Session, defer

from core.execution import states as S
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.workflows import Workflow
from services.orm import utcnow

# a suggestion's purpose as the queue names its kinds
# (a check suggestion is a suggestion to whoever decides it: core/coaching/checks.py)
SUGGESTION_KINDS = {
    "suggestion": ("coaching", "check"),
    "spot_check": ("spot_check",),
    "correction_request": ("correction",),
}
QUESTION_KINDS = ("human_input", "clarification")
# A row of either list shows its execution's status, mode, variables and gate, never its steps: the steps column
# (every step's state and output, turned into StepStates when loaded) is left unread.
LIGHT_EXECUTION = (defer(Execution.steps),)


@dataclass(frozen=True)
class Filters:
    workflow_id: str | None = None
    step_id: str | None = None
    kind: str | None = None  # suggestion | spot_check | correction_request (suggestions); human_input | clarification
    min_age_s: int | None = None  # opened at least this long ago
    max_age_s: int | None = None  # opened at most this long ago
    q: str | None = None
    oldest_first: bool = False


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _age(column, f: Filters) -> list:
    now, where = utcnow(), []
    if f.min_age_s is not None:
        where.append(column <= now - timedelta(seconds=f.min_age_s))
    if f.max_age_s is not None:
        where.append(column >= now - timedelta(seconds=f.max_age_s))
    return where


def _search(f: Filters, *columns) -> list:
    if not f.q or not f.q.strip():
        return []
    pattern = _like(f.q.strip())
    return [
        or_(
            *(func.lower(c).like(pattern, escape="\\") for c in columns),
            func.lower(cast(Execution.variables, String)).like(pattern, escape="\\"),
        )
    ]


def _page(session: Session, query, order, page: int, per_page: int):
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    rows = session.execute(query.order_by(*order).offset((page - 1) * per_page).limit(per_page)).all()
    return [tuple(r) for r in rows], total


def suggestions(
    session: Session, workspace_id: str, f: Filters, *, page: int = 1, per_page: int = 20
) -> tuple[list[tuple[Suggestion, Execution, str]], int]:
    """Pending suggestions with their execution and workflow name, newest first unless `oldest_first`."""
    where = [Suggestion.workspace_id == workspace_id, Suggestion.status == "pending"]
    if f.kind in QUESTION_KINDS:
        return [], 0
    if f.kind:
        where.append(Suggestion.purpose.in_(SUGGESTION_KINDS[f.kind]))
    if f.workflow_id:
        where.append(Suggestion.workflow_id == f.workflow_id)
    if f.step_id:
        where.append(Suggestion.step_id == f.step_id)
    where += _age(Suggestion.created_at, f) + _search(
        f, Workflow.name, Suggestion.step_id, func.coalesce(Suggestion.tool, "")
    )
    query = (
        select(Suggestion, Execution, Workflow.name)
        .options(*LIGHT_EXECUTION)
        .join(Execution, Execution.id == Suggestion.execution_id)
        .join(Workflow, Workflow.id == Suggestion.workflow_id)
        .where(*where)
    )
    created = Suggestion.created_at.asc() if f.oldest_first else Suggestion.created_at.desc()
    return _page(session, query, (created, Suggestion.id), page, per_page)


def questions(
    session: Session, workspace_id: str, f: Filters, *, page: int = 1, per_page: int = 20
) -> tuple[list[tuple[Execution, str]], int]:
    """Executions waiting for a person's answer (a human_input step, a pause for clarification), with their
    workflow's name. Their age is the time since the execution last changed: when it began to wait."""
    if f.kind and f.kind not in QUESTION_KINDS:
        return [], 0
    gate_kind, gate_step = Execution.gate["kind"].as_string(), Execution.gate["step_id"].as_string()
    where: list[Any] = [Execution.workspace_id == workspace_id, Execution.status == S.WAITING_CLARIFICATION]
    if f.kind:
        where.append(gate_kind == f.kind)
    if f.workflow_id:
        where.append(Execution.workflow_id == f.workflow_id)
    if f.step_id:
        where.append(gate_step == f.step_id)
    where += _age(Execution.updated_at, f) + _search(f, Workflow.name, func.coalesce(gate_step, ""))
    query = (
        select(Execution, Workflow.name)
        .options(*LIGHT_EXECUTION)
        .join(Workflow, Workflow.id == Execution.workflow_id)
        .where(*where)
    )
    updated = Execution.updated_at.asc() if f.oldest_first else Execution.updated_at.desc()
    return _page(session, query, (updated, Execution.id), page, per_page)


def question_view(ex: Execution, workflow_name: str, step_name: str | None) -> dict[str, Any]:
    gate = ex.gate or {}
    return {
        "execution_id": ex.id,
        "workflow_id": ex.workflow_id,
        "workflow_name": workflow_name,
        "workflow_version": ex.workflow_version,
        "step_id": gate.get("step_id"),
        "step_name": step_name or gate.get("step_id"),
        "kind": gate.get("kind"),
        "question": gate.get("question"),
        "paused_at": gate.get("paused_at"),
        "deadline": gate.get("deadline"),
        "on_timeout": gate.get("on_timeout"),
        "variables": ex.variables or {},
        "execution_mode": ex.mode,
        "waiting_since": ex.updated_at,
    }
