"""The workspace's and each operator's totals (GET /api/metrics/global, /api/metrics/operators, GET /metrics), counted
from the decisions when asked: nothing is kept for them on the decision path. The figures are core.coaching.totals';
this asks the database for what they are made of, a few aggregate statements whatever the number of decisions (no
decision row comes to Python):

- each kind's count and the latencies' range (GROUP BY the kind);
- the kinds of the last 50 decisions (the index on (workspace_id, created_at); per operator, ROW_NUMBER);
- the latency at each percentile's rank (ROW_NUMBER in latency order);
- the suggestions made (through the index of suggestions by execution; GET /api/metrics/global only).

A decision counts once it counted when it was made, as before: a check's is nobody's (core/coaching/checks.py), and one
held for its undo window counts once released (its suggestion `held` until then: a partial index finds those).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import func, select, text, tuple_
from sqlalchemy.orm import Session

from core.coaching import totals as T
from core.coaching.checks import PURPOSE as CHECK
from core.coaching.undo import HELD
from services.models.coaching import Decision, Suggestion, not_a_check
from services.models.executions import Execution

ALL = ""  # the key of the one group when the totals are not per operator

_HELD = text(f"suggestions.status = '{HELD}'")  # a literal: SQLite uses a partial index for a constant only


def _counted(workspace_id: str | None) -> list:
    """The decisions the totals count (`workspace_id` None: every workspace's)."""
    held = select(Suggestion.id).where(_HELD)
    where = [not_a_check()]
    if workspace_id is not None:
        held = held.where(Suggestion.workspace_id == workspace_id)
        where.append(Decision.workspace_id == workspace_id)
    where.append(Decision.suggestion_id.not_in(held))
    return where


def workspace(session: Session, workspace_id: str) -> dict[str, Any]:
    """The workspace's totals, suggestions included."""
    found = _figures(session, workspace_id, per_operator=False)
    return T.snapshot(**found.get(ALL, {"counts": {}}), suggestions=_suggestions(session, workspace_id))


def operators(session: Session, workspace_id: str) -> dict[str, dict[str, Any]]:
    """Each operator's totals, by email (an operator counts no suggestion: a suggestion is nobody's until decided)."""
    return {name: T.snapshot(**parts) for name, parts in sorted(_figures(session, workspace_id, True).items())}


def everywhere(session: Session) -> dict[str, Any]:
    """Every workspace's decisions and suggestions together (GET /metrics)."""
    found = _figures(session, None, per_operator=False)
    return T.snapshot(**found.get(ALL, {"counts": {}}), suggestions=_suggestions(session, None))


def _figures(session: Session, workspace_id: str | None, per_operator: bool) -> dict[str, dict[str, Any]]:
    """Per group (an operator, or ALL): core.coaching.totals.snapshot's arguments but the suggestions."""
    where = _counted(workspace_id)
    group = [Decision.operator] if per_operator else []

    def key(row) -> str:
        return row[0] if per_operator else ALL

    parts: dict[str, dict[str, Any]] = defaultdict(lambda: {"counts": {}, "window": {}, "at_rank": {}})
    for row in session.execute(
        select(*group, Decision.decision, func.count(), func.min(Decision.latency_ms), func.max(Decision.latency_ms))
        .where(*where)
        .group_by(*group, Decision.decision)
    ):
        found = parts[key(row)]
        kind, n, lo, hi = row[-4:]
        found["counts"][kind] = n
        found["lowest"] = lo if found.get("lowest") is None else min(found["lowest"], lo)
        found["highest"] = hi if found.get("highest") is None else max(found["highest"], hi)
    if not parts:
        return {}

    # the kinds of each group's last decisions (ties in time in the order of their ids, which are time-ordered)
    newest = (Decision.created_at.desc(), Decision.suggestion_id.desc())
    if per_operator:
        ranked = (
            select(
                Decision.operator,
                Decision.decision,
                func.row_number().over(partition_by=Decision.operator, order_by=newest).label("n"),
            )
            .where(*where)
            .subquery()
        )
        window = (
            select(ranked.c.operator, ranked.c.decision, func.count())
            .where(ranked.c.n <= T.WINDOW)
            .group_by(ranked.c.operator, ranked.c.decision)
        )
    else:
        last = select(Decision.decision).where(*where).order_by(*newest).limit(T.WINDOW).subquery()
        window = select(last.c.decision, func.count()).group_by(last.c.decision)
    for last_kinds in session.execute(window):
        parts[key(last_kinds)]["window"][last_kinds[-2]] = last_kinds[-1]

    # the latency at each percentile's rank, in one pass of each group in latency order
    wanted = {
        (name, r) for name, found in parts.items() for r in T.latency_ranks(sum(found["counts"].values())).values()
    }
    in_order = (Decision.latency_ms, Decision.suggestion_id)
    position = func.row_number().over(partition_by=group or None, order_by=in_order).label("n")
    ranked = select(*group, Decision.latency_ms, position).where(*where).subquery()
    if per_operator:
        at = select(ranked.c.operator, ranked.c.n, ranked.c.latency_ms).where(
            tuple_(ranked.c.operator, ranked.c.n).in_(sorted(wanted))
        )
    else:
        at = select(ranked.c.n, ranked.c.latency_ms).where(ranked.c.n.in_(sorted(r for _, r in wanted)))
    for value in session.execute(at):
        parts[key(value)]["at_rank"][value[-2]] = value[-1]
    return dict(parts)


def _suggestions(session: Session, workspace_id: str | None) -> int:
    """The suggestions made: every one but checks (a check counts nowhere but for whoever decides it); a
    workspace's through its executions, whose suggestions are indexed by execution."""
    query = select(func.count()).select_from(Suggestion).where(Suggestion.purpose != CHECK)
    if workspace_id is not None:
        query = query.join(Execution, Execution.id == Suggestion.execution_id).where(
            Execution.workspace_id == workspace_id
        )
    return int(session.scalar(query) or 0)
