"""Evidence from attentive reviews (issue #41, item 6): acceptance means little if reviewers rubber-stamp. For each
operator, how long they take to decide (the median and the 90th percentile of their decisions' latency, from when
the suggestion was shown to when they decided) and how many of their accepts came faster than a floor the workspace's
lead sets: an accept in less time than it takes to read the suggestion says little about the suggestion.

Pure figures; services/metrics/reviewers.py reads the decisions and the workspace's floor.

- **median**: the middle latency (the mean of the two middle ones for an even count).
- **p90**: the nearest-rank 90th percentile, a latency some decision took: 90% of the decisions took at most it.
- **fast accept**: an accept whose latency is below the floor (strictly); its share is of the operator's accepts
  (None when they accepted nothing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from core.coaching.counters import ACCEPT
from core.errors import ValidationFailed

DEFAULT_FLOOR_MS = 1500
MIN_FLOOR_MS = 100
MAX_FLOOR_MS = 600_000  # ten minutes


def check_floor(floor_ms: Any) -> int:
    """The floor as whole milliseconds within MIN_FLOOR_MS..MAX_FLOOR_MS, or a ValidationFailed saying why not."""
    if (
        isinstance(floor_ms, bool)
        or not isinstance(floor_ms, (int, float))
        or not math.isfinite(floor_ms)
        or floor_ms != int(floor_ms)
    ):
        raise ValidationFailed(
            "the floor is whole milliseconds",
            details={"attentive_floor_ms": ["must be a whole number of milliseconds"]},
        )
    if not MIN_FLOOR_MS <= floor_ms <= MAX_FLOOR_MS:
        raise ValidationFailed(
            "the floor is out of range",
            details={"attentive_floor_ms": [f"must be between {MIN_FLOOR_MS} and {MAX_FLOOR_MS} milliseconds"]},
        )
    return int(floor_ms)


def median(values: Sequence[float]) -> float | None:
    """The middle of the values (the mean of the two middle ones for an even count); None for none."""
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank q-quantile: the smallest value that at least q of the values do not exceed; None for none."""
    if not 0.0 < q <= 1.0:
        raise ValueError("q must be within (0, 1]")
    ordered = sorted(values)
    if not ordered:
        return None
    return float(ordered[max(1, math.ceil(q * len(ordered))) - 1])


def _round(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 1)


def reviewer(operator: str, decisions: Iterable[tuple[str, float]], floor_ms: float) -> dict[str, Any]:
    """One operator's figures from their decisions, each (kind, latency in ms)."""
    latencies, accepts = [], []
    for kind, latency_ms in decisions:
        ms = max(0.0, float(latency_ms or 0.0))
        latencies.append(ms)
        if kind == ACCEPT:
            accepts.append(ms)
    fast = sum(1 for ms in accepts if ms < floor_ms)
    return {
        "operator": operator,
        "decisions": len(latencies),
        "accepts": len(accepts),
        "median_ms": _round(median(latencies)),
        "p90_ms": _round(nearest_rank(latencies, 0.9)),
        "fast_accepts": fast,
        "fast_accept_share": round(fast / len(accepts), 4) if accepts else None,
    }


def reviewers(decisions: Iterable[tuple[str, str, float]], floor_ms: float) -> list[dict[str, Any]]:
    """Each operator's figures, by operator, from decisions (operator, kind, latency in ms)."""
    by_operator: dict[str, list[tuple[str, float]]] = {}
    for operator, kind, latency_ms in decisions:
        by_operator.setdefault(operator, []).append((kind, latency_ms))
    return [reviewer(name, found, floor_ms) for name, found in sorted(by_operator.items())]
