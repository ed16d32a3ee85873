"""GET /metrics (DESIGN.md §4): Prometheus text exposition of what the server already keeps.

Reads one `global` metrics row per workspace, never the decision history, so a scrape costs the same
however many decisions there are. Totals are summed over workspaces: the endpoint is not authenticated
(scrapers rarely are), so it names no tenant.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.coaching.metrics import DECISIONS, LatencyHistogram, MetricsState
from services.models import MetricScope

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_COUNTER = {"accept": "accepted", "reject": "rejected", "correct": "corrected", "manual": "manual", "skip": "skipped"}


def exposition(session: Session | None) -> str:
    """The text a scraper reads; `session` None means the database did not answer."""
    lines = ["# HELP coach_database_up 1 when the database answers.", "# TYPE coach_database_up gauge",
             f"coach_database_up {0 if session is None else 1}"]
    if session is None:
        return "\n".join(lines) + "\n"
    suggestions, decided, latency = 0, dict.fromkeys(DECISIONS, 0), LatencyHistogram()
    for row in session.scalars(select(MetricScope).where(MetricScope.scope == "global")):
        state = MetricsState.from_dict(row.state)
        counters = state.counters.to_dict()
        suggestions += counters["suggestions"]
        for kind in DECISIONS:
            decided[kind] += counters[_COUNTER[kind]]
        latency.merge(state.latency)
    lines += ["# HELP coach_suggestions_total Suggestions pushed to operators.",
              "# TYPE coach_suggestions_total counter", f"coach_suggestions_total {suggestions}",
              "# HELP coach_decisions_total Decisions made, by kind.", "# TYPE coach_decisions_total counter"]
    lines += [f'coach_decisions_total{{decision="{kind}"}} {decided[kind]}' for kind in DECISIONS]
    lines += ["# HELP coach_decision_latency_ms Time from a suggestion's push to its decision (approximate quantiles).",
              "# TYPE coach_decision_latency_ms gauge"]
    for name, value in (("0.5", latency.quantile(0.5)), ("0.9", latency.quantile(0.9))):
        if value is not None:
            lines.append(f'coach_decision_latency_ms{{quantile="{name}"}} {value}')
    return "\n".join(lines) + "\n"
