"""The pure rules of check suggestions (core/coaching/checks.py, docs/autonomy.md#check-suggestions): which param a
check changes and to what, a decision's outcome, who is attentive, the settings' bounds; and a decision left out of
the readiness test (core/coaching/metrics.py)."""

from __future__ import annotations

import random

import pytest

from core.coaching import checks as C
from core.coaching.counters import ACCEPT, REJECT
from core.coaching.evidence import Evidence
from core.coaching.metrics import MetricsState
from core.coaching.paths import MISSING
from core.errors import ValidationFailed


def test_a_check_sets_a_top_level_param_back_to_a_value_reviewers_corrected_away():
    params = {"to": "ops@example.com", "n": 1, "body": {"lang": "en"}}
    corrected = [("to", "wrong@example.com"), ("body.lang", "fr"), ("cc", "x@example.com"), ("n", MISSING)]
    # body.lang is nested, cc is no param of these, n was added by a correction (nothing was corrected away)
    assert C.candidates(params, corrected) == [C.CheckChange("to", "wrong@example.com", "ops@example.com")]
    change = C.choose(params, corrected, random.Random(1))
    assert C.shown_params(params, change) == {"to": "wrong@example.com", "n": 1, "body": {"lang": "en"}}
    assert params["to"] == "ops@example.com"  # the real params are untouched


def test_no_check_without_a_value_that_differs_from_the_real_one():
    assert C.candidates({"to": "a"}, [("to", "a")]) == []  # corrected away, but the real one has it again
    assert C.candidates({"n": 1}, [("n", 1.0)]) == [C.CheckChange("n", 1.0, 1)]  # 1 and 1.0 differ to a tool
    assert C.choose({"to": "a"}, [], random.Random(1)) is None
    assert C.choose(None, [("to", "b")], random.Random(1)) is None
    assert C.candidates({"a.b": 1}, [("a\\.b", 2)]) == [C.CheckChange("a.b", 2, 1)]  # an escaped top-level key


def test_the_choice_among_several_is_drawn_and_repeats_with_a_seed():
    params = {"a": 1, "b": 2}
    corrected = [("b", 5), ("a", 3), ("a", 4), ("a", 3)]
    options = C.candidates(params, corrected)
    assert [(c.param, c.shown) for c in options] == [("a", 3), ("a", 4), ("b", 5)]  # one each, in a stable order
    picks = [C.choose(params, corrected, random.Random(seed)) for seed in range(20)]
    assert set(picks) <= set(options) and len(set(picks)) > 1
    assert picks == [C.choose(params, corrected, random.Random(seed)) for seed in range(20)]


def test_the_rate_draws_nothing_when_off():
    class Counting(random.Random):
        draws = 0

        def random(self):
            self.draws += 1
            return 0.0

    rng = Counting()
    assert C.drawn(0.0, rng) is False and rng.draws == 0  # off: the runner's sequence is as without checks
    assert C.drawn(0.2, rng) is True and rng.draws == 1


@pytest.mark.parametrize(
    "kind, result", [("accept", "miss"), ("reject", "catch"), ("correct", "catch"), ("manual", "catch"), ("skip", None)]
)
def test_a_checks_outcome(kind, result):
    assert C.outcome(kind) == result


def test_attentive_needs_enough_checks_a_catch_rate_and_few_fast_accepts():
    bars = C.Bars(min_checks=5, min_catch_rate=0.8, max_fast_share=0.5)
    assert C.attentive(4, 4, 10, 0, bars) is False  # too few checks to say
    assert C.attentive(5, 4, 10, 0, bars) is True  # 0.8 catch rate is enough
    assert C.attentive(5, 3, 10, 0, bars) is False  # 0.6
    assert C.attentive(5, 5, 10, 5, bars) is True  # half their accepts fast: at the bar
    assert C.attentive(5, 5, 10, 6, bars) is False
    assert C.attentive(5, 5, 0, 0, bars) is True  # no accept yet: no fast ones
    assert C.attentive(0, 0, 0, 0, C.Bars(min_checks=0, min_catch_rate=0.0)) is False  # never without a check
    figures = C.figures(5, 4, 10, 2, bars)
    assert figures == {
        "checks": 5,
        "catches": 4,
        "misses": 1,
        "catch_rate": 0.8,
        "accepts": 10,
        "fast_accepts": 2,
        "fast_accept_share": 0.2,
        "attentive": True,
    }
    assert C.figures(0, 0, 0, 0, bars)["catch_rate"] is None


@pytest.mark.parametrize(
    "values, field",
    [
        ({"check_rate": 0.21}, "check_rate"),
        ({"check_rate": -0.01}, "check_rate"),
        ({"check_rate": True}, "check_rate"),
        ({"check_rate": float("nan")}, "check_rate"),
        ({"evidence_from": "most"}, "evidence_from"),
        ({"min_catch_rate": 1.01}, "min_catch_rate"),
        ({"max_fast_share": -0.5}, "max_fast_share"),
        ({"min_checks": 0}, "min_checks"),
        ({"min_checks": 1.5}, "min_checks"),
        ({"other": 1}, "other"),
    ],
)
def test_bad_settings_name_their_field(values, field):
    with pytest.raises(ValidationFailed) as raised:
        C.check_settings(values)
    assert field in raised.value.details


def test_good_settings_and_null_back_to_the_default():
    assert C.check_settings(
        {"check_rate": 0.2, "evidence_from": "attentive", "min_checks": 3, "min_catch_rate": 1, "max_fast_share": 0}
    ) == {
        "check_rate": 0.2,
        "evidence_from": "attentive",
        "min_checks": 3,
        "min_catch_rate": 1.0,
        "max_fast_share": 0.0,
    }
    assert C.check_settings({"check_rate": None}) == {"check_rate": None}
    assert C.DEFAULTS["check_rate"] == 0.0 and C.DEFAULTS["evidence_from"] == "all"


def test_a_decision_left_out_of_the_evidence_still_counts_in_the_counters():
    state = MetricsState()
    for _ in range(30):
        state.record_decision(ACCEPT, 100.0, evidence=False)
    assert state.counters.accepted == 30 and state.window.accepted == 30
    assert (state.evidence.counted, state.evidence.accepted) == (0, 0)
    assert state.assess().auto_ready is False  # thirty accepts, none of them evidence
    for _ in range(30):
        state.record_decision(ACCEPT, 100.0, attentive=True)
    snap = state.snapshot()
    assert (snap["evidence_decisions"], snap["attentive_decisions"]) == (30, 30)
    assert snap["auto_ready"] is True
    state.record_decision(REJECT, 100.0)
    assert (state.snapshot()["evidence_decisions"], state.snapshot()["attentive_decisions"]) == (31, 30)


def test_the_attentive_count_round_trips_and_restarts_with_the_evidence():
    e = Evidence(10, 12, 0.5, 7)
    assert Evidence.from_dict(e.to_dict()).to_dict() == e.to_dict()
    assert Evidence.from_dict({"accepted": 3, "counted": 4}).attentive == 0  # stored before it existed
    assert Evidence.from_dict({"accepted": 3, "counted": 4, "attentive": 9}).attentive == 4  # never more than counted
    e.restart()
    assert (e.counted, e.attentive) == (0, 0)
    state = MetricsState()
    state.record_decision(ACCEPT, 1.0, attentive=True)
    assert MetricsState.from_dict(state.to_dict()).evidence.attentive == 1
