"""core/coaching/totals.py: the totals made from counts give the figures a MetricsState that counted the same
decisions one by one gives (what the workspace's and the operators' metrics were before they were counted when
read)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from core.coaching import totals as T
from core.coaching.counters import DECISIONS
from core.coaching.latency import LatencyHistogram, rank, reported
from core.coaching.metrics import MetricsState

KEYS = (
    "decisions",
    "suggestions",
    "accepted",
    "rejected",
    "corrected",
    "manual",
    "skipped",
    "acceptance_rate",
    "rolling_acceptance_rate",
    "confidence",
    "decision_latency_ms",
    "window_size",
    "window_decisions",
)


def _from_counts(decided: list[tuple[str, float]], suggestions: int) -> dict:
    """What a database answers about these decisions (in the order they were made), made into the totals."""
    latencies = sorted(ms for _, ms in decided)
    ranks = T.latency_ranks(len(decided))
    return T.snapshot(
        Counter(kind for kind, _ in decided),
        suggestions=suggestions,
        window=Counter(kind for kind, _ in decided[-T.WINDOW :]),
        at_rank={r: latencies[r - 1] for r in ranks.values()},
        lowest=latencies[0] if latencies else None,
        highest=latencies[-1] if latencies else None,
    )


def _counted(decided: list[tuple[str, float]], suggestions: int) -> dict:
    state = MetricsState()
    for _ in range(suggestions):
        state.record_suggestion()
    for kind, ms in decided:
        state.record_decision(kind, ms)
    return {k: state.snapshot()[k] for k in KEYS}


@pytest.mark.parametrize("seed", range(40))
def test_the_totals_are_what_counting_each_decision_gave(seed):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 3, 9, 10, 49, 50, 51, 70, 137])
    weights = [rng.random() for _ in DECISIONS]
    # latencies over the whole range: negative (a clock step), under a millisecond, bucket edges, over an hour
    pick = [
        lambda: rng.uniform(-5, 1),
        lambda: float(rng.choice([1, 2, 1024, 4096, 1000, 3_600_000])),
        lambda: rng.lognormvariate(7, 2),
        lambda: rng.uniform(3_600_000, 9_000_000),
    ]
    decided = [(rng.choices(DECISIONS, weights)[0], rng.choice(pick)()) for _ in range(n)]
    suggestions = n + rng.randrange(5)
    assert _from_counts(decided, suggestions) == _counted(decided, suggestions)


def test_no_decision_has_no_latency_and_no_rate():
    body = T.snapshot({}, suggestions=3)
    assert body["decisions"] == 0 and body["suggestions"] == 3
    assert body["decision_latency_ms"] == {"p50": None, "p90": None}
    assert (body["acceptance_rate"], body["rolling_acceptance_rate"], body["confidence"]) == (0.0, 0.0, 0.0)
    assert (body["window_size"], body["window_decisions"]) == (50, 0)


def test_skips_are_no_evidence_of_acceptance():
    body = T.snapshot(
        {"accept": 3, "skip": 5, "reject": 1},
        window={"accept": 3, "skip": 5, "reject": 1},
        at_rank={5: 10.0, 9: 10.0},
        lowest=1,
        highest=10,
    )
    assert (body["decisions"], body["acceptance_rate"], body["rolling_acceptance_rate"]) == (9, 0.75, 0.75)
    assert body["window_decisions"] == 9


def test_ranks_are_the_histograms():
    assert T.latency_ranks(0) == {}
    assert T.latency_ranks(1) == {"p50": 1, "p90": 1}
    assert T.latency_ranks(10) == {"p50": 5, "p90": 9}
    assert T.latency_ranks(70) == {"p50": 35, "p90": 63}
    assert T.latency_ranks(71) == {"p50": 36, "p90": 64}


def test_reported_is_the_histograms_figure():
    h = LatencyHistogram()
    for ms in (-3.0, 0.4, 1024.0, 1500.0, 7_200_000.0):
        h.add(ms)
    values = sorted(max(0.0, v) for v in (-3.0, 0.4, 1024.0, 1500.0, 7_200_000.0))
    for q in (0.0, 0.2, 0.5, 0.7, 0.9, 1.0):
        assert h.quantile(q) == reported(values[rank(q, 5) - 1], -3.0, 7_200_000.0)


def test_unknown_kinds_and_overfull_windows_are_refused():
    with pytest.raises(ValueError):
        T.snapshot({"maybe": 1})
    with pytest.raises(ValueError):
        T.snapshot({"accept": 60}, window={"accept": 60}, at_rank={30: 1.0, 54: 1.0})
