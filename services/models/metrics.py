"""Each metric scope's running counts (the charts' hourly series are counted from the decisions: series.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.orm import Base, UtcDateTime, utcnow


class MetricScope(Base):
    """Running metrics of one scope that learns (workflow, workflow version, step, tool, spot checks, regions; an
    operator's checks and fast accepts), updated in each decision's own transaction so that reads never scan history:
    plain columns (core.coaching.metrics.MetricsState's counters, rolling window, sequential evidence and the
    latencies' range), the latency histogram's buckets in metric_latency. The workspace's and the operators'
    totals are counted from the decisions when read (services/metrics/totals.py)."""

    __tablename__ = "metric_scopes"
    __table_args__ = (UniqueConstraint("workspace_id", "scope", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"))
    scope: Mapped[str] = mapped_column(String(24))
    key: Mapped[str] = mapped_column(String(200))
    # core.coaching.counters.Counters
    suggestions: Mapped[int] = mapped_column(Integer, default=0)
    accepted: Mapped[int] = mapped_column(Integer, default=0)
    rejected: Mapped[int] = mapped_column(Integer, default=0)
    corrected: Mapped[int] = mapped_column(Integer, default=0)
    manual: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    # core.coaching.counters.RollingWindow: a letter per decision, oldest first
    recent: Mapped[str] = mapped_column(Text, default="")
    # core.coaching.evidence.Evidence: since the readiness test last restarted
    evidence_accepted: Mapped[int] = mapped_column(Integer, default=0)
    evidence_counted: Mapped[int] = mapped_column(Integer, default=0)
    evidence_drop: Mapped[float] = mapped_column(Float, default=0.0)
    evidence_attentive: Mapped[int] = mapped_column(Integer, default=0)
    # core.coaching.latency.LatencyHistogram's range (its buckets, which count it: MetricLatency)
    latency_min: Mapped[float | None] = mapped_column(Float, nullable=True)
    latency_max: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)


class MetricLatency(Base):
    """One bucket of a scope's latency histogram (core/coaching/latency.py: at most 178 per scope), counted up in SQL
    by each decision (INSERT … ON CONFLICT DO UPDATE SET count = count + 1)."""

    __tablename__ = "metric_latency"
    scope_id: Mapped[int] = mapped_column(ForeignKey("metric_scopes.id", ondelete="CASCADE"), primary_key=True)
    bucket: Mapped[int] = mapped_column(Integer, primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class WorkspaceReviewFloor(Base):
    """A workspace's own settings for attentive reviews (migrations 0038, 0039): the floor under which an accept
    counts as fast on the reviewers' figures (core/coaching/attention.py), the rate of check suggestions and the bars
    for evidence from attentive operators (core/coaching/checks.py). NULL, or no row: the default."""

    __tablename__ = "workspace_review_floor"
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), primary_key=True)
    attentive_floor_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    check_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    evidence_from: Mapped[str | None] = mapped_column(String(16), nullable=True)
    min_checks: Mapped[int | None] = mapped_column(Integer, nullable=True)
    min_catch_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_fast_share: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_by: Mapped[str] = mapped_column(String(254), default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)
