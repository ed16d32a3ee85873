"""core.coaching.attention: each operator's time to decide (median, nearest-rank p90) and the share of their accepts
faster than the workspace's floor (issue #41, item 6)."""

import pytest

from core.coaching.attention import (
    DEFAULT_FLOOR_MS,
    MAX_FLOOR_MS,
    MIN_FLOOR_MS,
    check_floor,
    median,
    nearest_rank,
    reviewer,
    reviewers,
)
from core.errors import ValidationFailed


def test_the_median_is_the_middle_value_or_the_mean_of_the_two_middle_ones():
    assert median([]) is None
    assert median([7.0]) == 7.0
    assert median([300, 100, 200]) == 200.0
    assert median([400, 100, 300, 200]) == 250.0


def test_p90_is_the_nearest_rank_a_latency_some_decision_took():
    assert nearest_rank([], 0.9) is None
    assert nearest_rank([5], 0.9) == 5.0
    ten = [100 * i for i in range(1, 11)]  # 100 … 1000
    assert nearest_rank(ten, 0.9) == 900.0  # 9 of the 10 took at most 900
    assert nearest_rank(list(reversed(ten)), 0.9) == 900.0
    assert nearest_rank(ten + [1100], 0.9) == 1000.0  # rank ceil(9.9) = 10
    assert nearest_rank([1, 2, 3], 0.9) == 3.0
    assert nearest_rank(ten, 0.5) == 500.0
    with pytest.raises(ValueError):
        nearest_rank(ten, 0)


def test_fast_accepts_are_the_accepts_strictly_below_the_floor_and_their_share_is_of_the_accepts():
    decisions = [
        ("accept", 400),
        ("accept", 1499.9),
        ("accept", 1500),
        ("accept", 9000),
        ("reject", 200),
        ("correct", 100),
        ("skip", 50),
    ]
    figures = reviewer("ann@x", decisions, 1500)
    assert figures == {
        "operator": "ann@x",
        "decisions": 7,
        "accepts": 4,
        "median_ms": 400.0,
        "p90_ms": 9000.0,
        "fast_accepts": 2,
        "fast_accept_share": 0.5,
    }
    # a fast reject is not a fast accept: the share is of accepts only
    assert reviewer("bob@x", [("reject", 10), ("correct", 20)], 1500)["fast_accept_share"] is None
    assert reviewer("bob@x", [("reject", 10), ("correct", 20)], 1500)["fast_accepts"] == 0


def test_every_operator_gets_their_own_figures_by_email_order():
    rows = [
        ("bob@x", "accept", 100.0),
        ("ann@x", "accept", 2000.0),
        ("bob@x", "accept", 3000.0),
        ("ann@x", "reject", 1000.0),
        ("bob@x", "accept", 120.04),
    ]
    out = reviewers(rows, 1500)
    assert [r["operator"] for r in out] == ["ann@x", "bob@x"]
    ann, bob = out
    assert (
        ann["decisions"],
        ann["accepts"],
        ann["median_ms"],
        ann["p90_ms"],
        ann["fast_accepts"],
        ann["fast_accept_share"],
    ) == (2, 1, 1500.0, 2000.0, 0, 0.0)
    assert (
        bob["decisions"],
        bob["accepts"],
        bob["median_ms"],
        bob["p90_ms"],
        bob["fast_accepts"],
        bob["fast_accept_share"],
    ) == (3, 3, 120.0, 3000.0, 2, 0.6667)
    assert reviewers([], 1500) == []
    # a negative latency (a clock step) counts as 0
    assert reviewer("c@x", [("accept", -5)], 1500)["median_ms"] == 0.0


def test_the_floor_is_whole_milliseconds_within_its_bounds():
    assert check_floor(DEFAULT_FLOOR_MS) == 1500
    assert check_floor(MIN_FLOOR_MS) == 100 and check_floor(MAX_FLOOR_MS) == 600_000
    assert check_floor(2000.0) == 2000
    for bad in (99, 600_001, -1, 0, 1500.5, float("nan"), float("inf"), True, "1500", None):
        with pytest.raises(ValidationFailed) as raised:
            check_floor(bad)
        assert "attentive_floor_ms" in raised.value.details
