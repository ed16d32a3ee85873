"""The sequential tests behind AUTO readiness and demotion (core.coaching.evidence, docs/autonomy.md): the
statistics, and a small seeded run of bench/autonomy.py's simulation with loose targets (the bench runs 2,000
runs per point and holds the real ones)."""

from __future__ import annotations

import math
import random

import pytest

from bench.autonomy import (
    DEMOTION_HORIZON,
    HORIZON,
    median,
    share_within,
    time_to_demote,
    time_to_lose_ready,
    time_to_ready,
)
from core.coaching.counters import ACCEPT, REJECT, SKIP
from core.coaching.evidence import (
    Evidence,
    accepts_needed,
    betainc,
    log_betainc,
    log_e_promote,
    promotion_ready,
)
from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState, should_demote


def _integral(a: float, b: float, x: float, steps: int = 20_000) -> float:
    h = x / steps
    total = sum(((i + 0.5) * h) ** (a - 1) * (1 - (i + 0.5) * h) ** (b - 1) for i in range(steps)) * h
    return total / math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


@pytest.mark.parametrize("a,b,x", [(2, 3, 0.4), (10, 2, 0.85), (1, 30, 0.5), (50, 5, 0.9), (3.5, 1.5, 0.2)])
def test_betainc_matches_numerical_integration(a, b, x):
    assert betainc(a, b, x) == pytest.approx(_integral(a, b, x), rel=1e-4)


def test_log_betainc_is_accurate_when_tiny_and_at_the_ends():
    # I_x(a, 1) = x^a exactly
    assert log_betainc(30, 1, 0.15) == pytest.approx(30 * math.log(0.15), rel=1e-9)
    assert log_betainc(2, 2, 0.0) == -math.inf and log_betainc(2, 2, 1.0) == 0.0


def test_the_e_value_of_all_accepts_is_the_closed_form():
    # E(n, n) = (1 - p0^(n+1)) / ((n+1) (1-p0) p0^n)
    for n in (1, 10, 28, 100):
        expected = (1 - 0.85 ** (n + 1)) / ((n + 1) * 0.15 * 0.85**n)
        assert math.exp(log_e_promote(n, n, 0.85)) == pytest.approx(expected, rel=1e-9)
    assert log_e_promote(0, 0, 0.85) == 0.0


def test_the_e_value_is_a_supermartingale_at_the_threshold():
    # E[E(a + X, n + 1)] <= E(a, n) under p = p0: a fair bet cannot grow the evidence on average
    p0 = 0.85
    for a, n in ((0, 0), (5, 6), (28, 30), (80, 100)):
        now = math.exp(log_e_promote(a, n, p0))
        nxt = p0 * math.exp(log_e_promote(a + 1, n + 1, p0)) + (1 - p0) * math.exp(log_e_promote(a, n + 1, p0))
        assert nxt == pytest.approx(now, rel=1e-9)  # a martingale exactly at p0


def test_accepts_needed_is_the_first_count_that_makes_it_ready():
    for a, n in ((0, 0), (45, 50), (170, 200), (17, 20)):
        k = accepts_needed(a, n, 0.85, 0.05)
        assert promotion_ready(a + k, n + k, 0.85, 0.05)
        assert k == 0 or not promotion_ready(a + k - 1, n + k - 1, 0.85, 0.05)
    assert accepts_needed(0, 0, 1.0, 0.05) is None


def test_skips_are_not_evidence():
    s = MetricsState()
    for _ in range(100):
        s.record_decision(SKIP)
    assert (s.evidence.counted, s.assess().auto_ready) == (0, False)


def test_one_early_reject_is_not_evidence_of_a_drop_four_in_a_row_are():
    t = LevelThresholds()
    spot = MetricsState(thresholds=t)
    for _ in range(3):
        spot.record_decision(REJECT)
        assert should_demote(spot, t) is False
    spot.record_decision(REJECT)
    assert should_demote(spot, t) is True
    for _ in range(2):  # the detector calms down as accepts come back
        spot.record_decision(ACCEPT)
    assert should_demote(spot, t) is False


def test_a_restart_forgets_the_evidence_and_survives_storage():
    s = MetricsState()
    for _ in range(40):
        s.record_decision(ACCEPT)
    assert s.assess().auto_ready
    s.restart_evidence()
    assert not s.assess().auto_ready and s.snapshot()["evidence"]["decisions_needed_if_all_accepted"] == 28
    assert MetricsState.from_dict(s.to_dict()).evidence.to_dict() == s.evidence.to_dict()
    assert Evidence.from_dict({"accepted": 3, "counted": 4, "drop": "nan"}).drop == 0.0


def test_a_stored_state_from_before_the_test_is_judged_on_its_window():
    # what rows written before this change hold: counters and the window, no "evidence"
    ready = MetricsState.from_dict({"counters": {"accepted": 500}, "window": "a" * 50})
    assert ready.assess().auto_ready is True  # 50 accepts in a row: e-value about 450 >= 20
    old_rule = MetricsState.from_dict({"counters": {"accepted": 425, "rejected": 75}, "window": "a" * 43 + "r" * 7})
    assert old_rule.assess().auto_ready is False  # 86% of 50: AUTO-ready before, not evidence now


# --- the simulation, small and seeded: loose targets that a correct test passes every time ---------------


def test_promotion_rarely_at_or_below_the_threshold():
    rng = random.Random(12)
    assert share_within([time_to_ready(0.85, rng) for _ in range(150)], HORIZON) <= 0.10
    assert share_within([time_to_ready(0.80, rng) for _ in range(100)], HORIZON) <= 0.03


def test_promotion_is_quick_at_095_and_likely_at_090():
    rng = random.Random(13)
    assert median([time_to_ready(0.95, rng) for _ in range(200)]) <= 70
    assert share_within([time_to_ready(0.90, rng) for _ in range(100)], HORIZON) >= 0.85


def test_a_drop_loses_auto_ready_quickly():
    rng = random.Random(14)
    assert median([time_to_lose_ready(rng) for _ in range(200)]) <= 30


def test_demotion_is_rare_at_095_and_quick_at_060():
    rng = random.Random(15)
    assert share_within([time_to_demote(0.95, rng) for _ in range(200)], DEMOTION_HORIZON) <= 0.10
    assert median([time_to_demote(0.60, rng) for _ in range(200)]) <= 18


def test_accepts_needed_matches_a_brute_force_search():
    rng = random.Random(0)
    for _ in range(100):
        b, a = rng.randint(0, 40), rng.randint(0, 300)
        p0, alpha = rng.choice([0.5, 0.85, 0.9]), rng.choice([0.05, 0.2])
        brute = next(k for k in range(5000) if promotion_ready(a + k, a + k + b, p0, alpha))
        assert accepts_needed(a, a + b, p0, alpha) == brute


def test_a_spot_check_scope_stored_before_the_test_does_not_demote_on_its_past():
    # a workflow in AUTO when this test arrived: its stored spot checks (no "evidence") were bad, but the
    # change detector starts at 0, so it takes new rejects to demote it, not the upgrade
    t = LevelThresholds()
    spot = MetricsState.from_dict({"counters": {"accepted": 2, "rejected": 8}, "window": "aarrrrrrrr"})
    assert should_demote(spot, t) is False
    spot.record_decision(REJECT)
    assert should_demote(spot, t) is False
