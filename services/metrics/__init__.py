"""Metrics: CoachingMetricsCollector's scopes, the evidence a decision adds and what it changes (promotion readiness,
demotion), notices, Prometheus.

service.py         each scope's running metrics, updated in the decision's transaction
evidence.py        a decision counted, level changes, demotion
step_decisions.py  the decisions behind a step's readiness
reviewers.py       each operator's time to decide and fast accepts, and the workspace's floor
notices.py         the dashboard's notices
prometheus.py      GET /metrics
series.py          the charts' hourly series, counted from the decisions when read
models.py          MetricScope, MetricLatency (its latency buckets), WorkspaceReviewFloor
"""
