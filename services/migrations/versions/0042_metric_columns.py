"""metric_columns: a metric scope's state in columns (issue 43 item 7): the counters, the rolling window (`recent`), the
readiness test's evidence and the latencies' range in metric_scopes, the latency histogram's buckets in metric_latency
(one row per bucket, counted up in SQL). No decision parses or writes a JSON state any more; the JSON `state` column
goes, its content moved into the columns here.

The downgrade writes each row's columns back into a JSON state as the code before reads it (of the thresholds only a
window long enough for the letters kept: that code takes the rest from the workflow's settings) and drops the new
table and columns.

Revision ID: 0042_metric_columns
Revises: 0041_totals_from_decisions
Create Date: 2026-12-07 23:30:00
"""

import json
import math
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0042_metric_columns"
down_revision = "0041_totals_from_decisions"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")
COUNTERS = ("suggestions", "accepted", "rejected", "corrected", "manual", "skipped")
EVIDENCE = ("accepted", "counted", "drop", "attentive")
LETTERS = set("arcms")
SCHEME = "log2/8/3600000"  # core/coaching/latency.py's, the only one ever written


def _columns() -> list[sa.Column]:
    return [
        *(sa.Column(name, sa.Integer(), nullable=False, server_default="0") for name in COUNTERS),
        sa.Column("recent", sa.Text(), nullable=False, server_default=""),
        sa.Column("evidence_accepted", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("evidence_counted", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("evidence_drop", sa.Float(), nullable=False, server_default="0"),
        sa.Column("evidence_attentive", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("latency_min", sa.Float(), nullable=True),
        sa.Column("latency_max", sa.Float(), nullable=True),
    ]


def _number(value, default=0.0) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def _count(value) -> int:
    return max(0, int(_number(value)))


def moved(state) -> tuple[dict, dict[int, int]]:
    """A stored JSON state as the new columns and its latency buckets (what core.coaching.metrics.MetricsState's
    from_dict made of it: an evidence stored before it existed starts from its window's counts)."""
    if isinstance(state, str):
        state = json.loads(state or "{}")
    state = state if isinstance(state, dict) else {}
    counters = state.get("counters") or {}
    window = "".join(c for c in str(state.get("window") or "") if c in LETTERS)
    latency = state.get("latency") or {}
    buckets = {}
    if latency.get("scheme", SCHEME) == SCHEME:
        buckets = {int(i): _count(n) for i, n in (latency.get("buckets") or {}).items() if _count(n)}
    evidence = state.get("evidence")
    ev: tuple[int, int, float, int]
    if isinstance(evidence, dict):
        counted = _count(evidence.get("counted"))
        drop = max(0.0, _number(evidence.get("drop")))
        ev = (_count(evidence.get("accepted")), counted, drop, min(counted, _count(evidence.get("attentive"))))
    else:
        ev = (window.count("a"), len(window) - window.count("s"), 0.0, 0)
    values: dict[str, Any] = {name: _count(counters.get(name)) for name in COUNTERS}
    values["recent"] = window
    values.update(
        zip(("evidence_accepted", "evidence_counted", "evidence_drop", "evidence_attentive"), ev, strict=True)
    )
    lo, hi = latency.get("min"), latency.get("max")
    values["latency_min"] = None if lo is None or not buckets else _number(lo)
    values["latency_max"] = None if hi is None or not buckets else _number(hi)
    return values, buckets


def _scopes() -> sa.TableClause:
    return sa.table(
        "metric_scopes",
        sa.column("id", sa.Integer()),
        sa.column("state", JsonType),
        *(sa.column(c.name, c.type) for c in _columns()),
    )


_LATENCY = sa.table("metric_latency", sa.column("scope_id"), sa.column("bucket"), sa.column("count"))


def upgrade() -> None:
    # the table of buckets comes after metric_scopes is rebuilt (SQLite's batch mode copies it and drops the old one,
    # which would take the buckets' rows with it)
    with op.batch_alter_table("metric_scopes") as batch:
        for column in _columns():
            batch.add_column(column)
    conn, scopes = op.get_bind(), _scopes()
    buckets: dict[int, dict[int, int]] = {}
    for scope_id, state in conn.execute(sa.select(scopes.c.id, scopes.c.state)).all():
        values, buckets[scope_id] = moved(state)
        conn.execute(scopes.update().where(scopes.c.id == scope_id).values(**values))
    with op.batch_alter_table("metric_scopes") as batch:
        batch.drop_column("state")
    op.create_table(
        "metric_latency",
        sa.Column("scope_id", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["scope_id"], ["metric_scopes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("scope_id", "bucket"),
    )
    rows = [
        {"scope_id": i, "bucket": b, "count": n} for i, own in sorted(buckets.items()) for b, n in sorted(own.items())
    ]
    if rows:
        conn.execute(_LATENCY.insert(), rows)


def downgrade() -> None:
    conn, scopes = op.get_bind(), _scopes()
    buckets: dict[int, dict[str, int]] = {}
    for scope_id, bucket, n in conn.execute(
        sa.select(_LATENCY.c.scope_id, _LATENCY.c.bucket, _LATENCY.c.count).order_by(_LATENCY.c.bucket)
    ):
        buckets.setdefault(scope_id, {})[str(bucket)] = n
    op.drop_table("metric_latency")  # first: rebuilding metric_scopes (SQLite) would delete its rows anyway
    with op.batch_alter_table("metric_scopes") as batch:
        batch.add_column(sa.Column("state", JsonType, nullable=True))
    for row in conn.execute(sa.select(scopes)).mappings().all():
        own = buckets.get(row["id"], {})
        state = {
            "counters": {name: row[name] for name in COUNTERS},
            "window": row["recent"],
            "latency": {
                "scheme": SCHEME,
                "buckets": own,
                "count": sum(own.values()),
                "min": row["latency_min"],
                "max": row["latency_max"],
            },
            "evidence": {name: row[f"evidence_{name}"] for name in EVIDENCE},
            # a window as long as the one kept (the code before truncates to its stored window before it applies the
            # workflow's; the other thresholds always come from the workflow's settings)
            "thresholds": {"window": max(50, len(row["recent"]))},
        }
        conn.execute(scopes.update().where(scopes.c.id == row["id"]).values(state=state))
    with op.batch_alter_table("metric_scopes") as batch:
        for column in _columns():
            batch.drop_column(column.name)
