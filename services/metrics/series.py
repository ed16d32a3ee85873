"""The dashboards' time series: each UTC hour's decisions (the workspace's, a workflow's, each operator's), counted
from the decisions themselves when a chart is read. Nothing is kept for them on the decision path: a decision is one
row of `decisions` already, and a GROUP BY over the index on (workspace_id, created_at) reads two weeks of them.

A decision held for its undo window counts from when it was made (taken back, its row is gone and so is its count).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import String, func, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.functions import FunctionElement

from services.models.coaching import Decision, not_a_check
from services.orm import utcnow

KINDS = ("accept", "reject", "correct", "manual", "skip")
HOURS = 24 * 14  # what the charts show


class utc_hour(FunctionElement):
    """The UTC hour holding a UtcDateTime column, as text `YYYY-MM-DD HH` on every backend (SQLAlchemy's documented
    way to a per-dialect SQL function: sqlalchemy.ext.compiler)."""

    type = String()
    name = "utc_hour"
    inherit_cache = True


@compiles(utc_hour)
def _utc_hour_sqlite(element, compiler, **kw):
    # SQLite holds a UtcDateTime as UTC text, `2026-11-28 03:04:05.000000` (services/orm.py)
    return f"substr({compiler.process(element.clauses, **kw)}, 1, 13)"


@compiles(utc_hour, "postgresql")
def _utc_hour_postgresql(element, compiler, **kw):
    return f"to_char({compiler.process(element.clauses, **kw)} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24')"


def workspace_series(session: Session, workspace_id: str, hours: int = HOURS) -> list[dict[str, Any]]:
    """Every decision of the workspace, hour by hour."""
    return _points(session.execute(_counts(workspace_id, hours)))


def workflow_series(session: Session, workspace_id: str, workflow_id: str, hours: int = HOURS) -> list[dict[str, Any]]:
    """One workflow's decisions, hour by hour."""
    return _points(session.execute(_counts(workspace_id, hours, Decision.workflow_id == workflow_id)))


def operator_series(session: Session, workspace_id: str, hours: int = HOURS) -> dict[str, list[dict[str, Any]]]:
    """Each operator's own decisions, hour by hour, in one query."""
    rows = defaultdict(list)
    for row in session.execute(_counts(workspace_id, hours, by=Decision.operator)):
        rows[row[0]].append(row[1:])
    return {operator: _points(found) for operator, found in rows.items()}


def _counts(workspace_id: str, hours: int, *where, by=None):
    hour = utc_hour(Decision.created_at)
    since = utcnow().replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours)
    grouped = (hour, Decision.decision) if by is None else (by, hour, Decision.decision)
    return (
        select(*grouped, func.count(), func.coalesce(func.sum(Decision.latency_ms), 0.0))
        .where(
            Decision.workspace_id == workspace_id,
            Decision.created_at >= since,
            Decision.decision.in_(KINDS),
            not_a_check(),
            *where,
        )
        .group_by(*grouped)
    )


def _points(rows: Iterable[tuple]) -> list[dict[str, Any]]:
    """(hour, kind, count, latency sum) rows as the chart's points, oldest first."""
    hours: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for hour, kind, count, latency in rows:
        hours[hour][kind] += count
        hours[hour]["latency_ms_sum"] += float(latency or 0.0)
    out = []
    for hour in sorted(hours):
        c = hours[hour]
        decisions = int(sum(c[k] for k in KINDS))
        counted = decisions - int(c["skip"])
        out.append(
            {
                "bucket": datetime.strptime(hour, "%Y-%m-%d %H").replace(tzinfo=UTC).isoformat(),
                "decisions": decisions,
                "accepted": int(c["accept"]),
                "rejected": int(c["reject"]),
                "corrected": int(c["correct"]),
                "manual": int(c["manual"]),
                "skipped": int(c["skip"]),
                "acceptance_rate": round(c["accept"] / counted, 4) if counted else 0.0,
                "latency_ms_avg": round(c["latency_ms_sum"] / decisions, 1) if decisions else None,
            }
        )
    return out
