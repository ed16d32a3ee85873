"""Per-step autonomy (core.coaching.autonomy): which tool steps a human sees, and the rules of a step's mode."""

from __future__ import annotations

import pytest

from core.coaching import autonomy as A
from core.errors import Conflict, ValidationFailed


def _never() -> bool:
    return False


def _always() -> bool:
    return True


@pytest.mark.parametrize(
    "execution, workflow, step, spot, expected",
    [
        # a coaching run asks about every step, except the ones promoted alone (spot-checked)
        ("coaching", "coaching", None, _always, "decision"),
        ("coaching", "coaching", "auto", _never, None),
        ("coaching", "coaching", "auto", _always, "spot_check"),
        ("coaching", "auto", None, _never, "decision"),
        # an AUTO run: spot checks, except pinned steps, which are always decided
        ("auto", "auto", None, _never, None),
        ("auto", "auto", None, _always, "spot_check"),
        ("auto", "auto", "always_review", _never, "decision"),
        ("coaching", "coaching", "always_review", _never, "decision"),
        # an AUTO run of a workflow demoted while it ran goes on as coaching
        ("auto", "coaching", None, _never, "decision"),
        ("auto", "coaching", "auto", _never, None),
        # normal runs: only policy gates them
        ("normal", "auto", "always_review", _always, None),
        ("normal", "coaching", None, _always, None),
    ],
)
def test_review_for(execution, workflow, step, spot, expected):
    assert A.review_for(execution, workflow, step, spot) == expected


def test_the_spot_check_sample_is_drawn_only_when_it_decides():
    draws = []

    def spot() -> bool:
        draws.append(1)
        return True

    A.review_for("coaching", "coaching", None, spot)
    A.review_for("auto", "auto", "always_review", spot)
    assert draws == []
    A.review_for("coaching", "coaching", "auto", spot)
    assert draws == [1]


def test_promoting_a_step_needs_its_evidence_unless_forced():
    with pytest.raises(Conflict, match="not AUTO-ready"):
        A.check_step_mode("coaching", "auto", auto_ready=False, force=False)
    A.check_step_mode("coaching", "auto", auto_ready=True, force=False)
    A.check_step_mode("coaching", "auto", auto_ready=False, force=True)


def test_a_pinned_step_is_not_promoted_even_by_force():
    with pytest.raises(Conflict, match="pinned"):
        A.check_step_mode("always_review", "auto", auto_ready=True, force=True)
    # unpinning and pinning need no evidence
    A.check_step_mode("always_review", "coaching", auto_ready=False, force=False)
    A.check_step_mode("auto", "always_review", auto_ready=False, force=False)


def test_an_unknown_mode_names_the_field():
    with pytest.raises(ValidationFailed) as raised:
        A.check_step_mode("coaching", "sometimes", auto_ready=True, force=False)
    assert "mode" in raised.value.details


def test_step_modes_live_in_settings_and_coaching_means_following_the_workflow():
    settings = {"thresholds": {"window": 20}}
    s1 = A.with_step_mode(settings, "pay", "auto")
    s2 = A.with_step_mode(s1, "ship", "always_review")
    assert A.step_modes(s2) == {"pay": "auto", "ship": "always_review"}
    assert s2["thresholds"] == {"window": 20} and A.step_modes(settings) == {}
    assert A.step_modes(A.with_step_mode(s2, "pay", "coaching")) == {"ship": "always_review"}
    # whatever else sits in the settings is not a mode
    assert A.step_modes({"step_modes": {"x": "sometimes", "y": "auto"}}) == {"y": "auto"}
    assert A.step_modes({"step_modes": ["auto"]}) == {} and A.step_modes(None) == {}
