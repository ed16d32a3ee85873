"""The totals of a set of decisions (the workspace's, one operator's: docs/design.md#metrics-and-learning-levels) made
from what a database counts of them when asked, with no state kept per decision: how many of each kind, the
kinds of the last `window` decisions, the latency values at the percentiles' ranks and the latencies' range.

The figures are those a MetricsState that counted the same decisions shows (core/coaching/metrics.py): the same
rates, the same Wilson bound, the same latency figures (core.coaching.latency.reported gives the histogram's
figure from the value at its rank). A level and the readiness test are not here: those are a workflow's, a step's
or a tool's, whose sequential test follows its decisions one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.coaching.counters import ACCEPT, DECISIONS, SKIP, Counters, check_kind, wilson_lower_bound
from core.coaching.latency import PERCENTILES, rank, reported
from core.coaching.levels import LevelThresholds

WINDOW = LevelThresholds().window  # the defaults' window: no workflow's thresholds apply to these totals


def latency_ranks(count: int) -> dict[str, int]:
    """The rank (1-based, in ascending latency) of each percentile a snapshot reports, among `count` decisions;
    none without a decision."""
    return {name: rank(q, count) for name, q in PERCENTILES.items()} if count else {}


def snapshot(
    counts: Mapping[str, int],
    *,
    suggestions: int = 0,
    window: Mapping[str, int] | None = None,
    at_rank: Mapping[int, float] | None = None,
    lowest: float | None = None,
    highest: float | None = None,
    window_size: int = WINDOW,
) -> dict[str, Any]:
    """The totals' figures. `counts`: decisions of each kind (core.coaching.counters.DECISIONS); `window`: of each
    kind among the last `window_size` decisions; `at_rank`: the latency of the decision at each rank that
    `latency_ranks` names for their number; `lowest`, `highest`: the smallest and largest latency."""
    for kind in (*counts, *(window or {})):
        check_kind(kind)
    c = Counters(suggestions=int(suggestions), **{_ATTR[k]: int(counts.get(k, 0)) for k in DECISIONS})
    window = window or {}
    in_window = sum(window.values())
    if in_window > window_size:
        raise ValueError(f"a window of {window_size} holds {in_window} decisions")
    counted = in_window - window.get(SKIP, 0)
    accepted = window.get(ACCEPT, 0)
    latency: dict[str, int | None] = dict.fromkeys(PERCENTILES)
    if c.decisions:
        at_rank = at_rank or {}
        lo, hi = float(lowest or 0.0), float(highest or 0.0)
        for name, r in latency_ranks(c.decisions).items():
            latency[name] = reported(at_rank[r], lo, hi)
    return {
        **c.view(),
        "rolling_acceptance_rate": round(accepted / counted, 4) if counted else 0.0,
        "confidence": round(wilson_lower_bound(accepted, counted), 4),
        "decision_latency_ms": latency,
        "window_size": window_size,
        "window_decisions": in_window,
    }


_ATTR = {"accept": "accepted", "reject": "rejected", "correct": "corrected", "manual": "manual", "skip": "skipped"}
