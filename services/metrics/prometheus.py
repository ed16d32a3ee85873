"""GET /metrics (docs/api.md): what the server already keeps, exposed through prometheus_client.

A custom collector counts every workspace's decisions and suggestions at each scrape, in a few aggregate statements
(services/metrics/totals.py: nothing is kept for them on the decision path), and reports their totals: the endpoint is
not authenticated (scrapers rarely are), so it names no tenant. When the database does not answer, the scrape still
succeeds with `coach_database_up 0` and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy.orm import Session

from core.coaching.counters import DECISIONS
from core.coaching.latency import PERCENTILES
from services.metrics import totals

log = logging.getLogger(__name__)
_COUNTER = {"accept": "accepted", "reject": "rejected", "correct": "corrected", "manual": "manual", "skip": "skipped"}


class CoachCollector:
    """prometheus_client's custom collector protocol: `collect()` yields metric families, read at scrape time."""

    def __init__(self, read: Callable[[], AbstractContextManager[Session]]):
        self.read = read  # services.db.read: a read-only session

    def collect(self) -> Iterator[Metric]:
        try:
            with self.read() as session:
                suggestions, decided, latency = _totals(session)
        except Exception as exc:  # the scrape still answers, saying the database is down
            log.debug("metrics scrape: the database did not answer (%s)", type(exc).__name__)
            yield GaugeMetricFamily("coach_database_up", "1 when the database answers.", value=0)
            return
        yield GaugeMetricFamily("coach_database_up", "1 when the database answers.", value=1)
        yield CounterMetricFamily("coach_suggestions", "Suggestions pushed to operators.", value=suggestions)
        decisions = CounterMetricFamily("coach_decisions", "Decisions made, by kind.", labels=["decision"])
        for kind in DECISIONS:
            decisions.add_metric([kind], decided[kind])
        yield decisions
        quantiles = GaugeMetricFamily(
            "coach_decision_latency_ms",
            "Time from a suggestion's push to its decision (approximate quantiles).",
            labels=["quantile"],
        )
        for name, q in PERCENTILES.items():
            value = latency[name]
            if value is not None:
                quantiles.add_metric([str(q)], value)
        yield quantiles


def _totals(session: Session) -> tuple[int, dict[str, int], dict[str, int | None]]:
    found = totals.everywhere(session)
    return found["suggestions"], {kind: found[_COUNTER[kind]] for kind in DECISIONS}, found["decision_latency_ms"]


def registry(read: Callable[[], AbstractContextManager[Session]]) -> CollectorRegistry:
    """The registry a scrape encodes: Coach's collector only (no process or platform metrics of this Python)."""
    built = CollectorRegistry(auto_describe=False)
    built.register(CoachCollector(read))
    return built
