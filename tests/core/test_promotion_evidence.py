"""Promotion with the evidence (issue 31, item 7): the decisions a scope still needs by every bar, the steps a
workflow's promotion leaves not ready, and a forced promotion's reason."""

from __future__ import annotations

import pytest

from core.coaching.autonomy import check_force, steps_not_ready
from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState
from core.errors import ValidationFailed

FAST = LevelThresholds.from_dict(
    {"coaching_after": 5, "auto_min_window": 10, "window": 20, "auto_acceptance": 0.6, "auto_alpha": 0.1}
)


def _state(*kinds: str) -> MetricsState:
    state = MetricsState.from_dict({"thresholds": FAST.to_dict()})
    for kind in kinds:
        state.record_decision(kind)
    return state


def test_a_ready_scope_needs_no_decision():
    state = _state(*["accept"] * 30)
    snap = state.snapshot()
    assert snap["auto_ready"] is True and snap["decisions_needed"] == 0


def test_decisions_needed_is_the_largest_bar_and_reaching_it_makes_the_scope_ready():
    state = _state("accept", "reject")
    needed = state.snapshot()["decisions_needed"]
    assert needed >= FAST.auto_min_window - 2  # the window's minimum is one of the bars
    for _ in range(needed - 1):
        state.record_decision("accept")
    assert state.snapshot()["auto_ready"] is False
    state.record_decision("accept")
    assert state.snapshot()["auto_ready"] is True


def test_no_decision_yet_needs_at_least_the_window():
    assert _state().snapshot()["decisions_needed"] >= FAST.auto_min_window


def test_steps_not_ready_lists_each_tool_step_without_evidence_of_its_own_in_order():
    ready = _state(*["accept"] * 30).snapshot()
    learning = _state("accept", "reject").snapshot()
    found = steps_not_ready({"a": ready, "b": learning}, ["a", "b", "c", "pinned"], {"pinned": "always_review"})
    assert [s["step_id"] for s in found] == ["b", "c"]
    assert found[0]["level"] == learning["level"] and found[0]["decisions_needed"] == learning["decisions_needed"]
    assert found[1] == {"step_id": "c", "level": "OBSERVATION", "decisions": 0, "decisions_needed": None}


def test_a_forced_promotion_needs_a_reason():
    assert check_force(False, None) is None
    assert check_force(True, "  audit in Q4 ") == "audit in Q4"
    for missing in (None, "", "   "):
        with pytest.raises(ValidationFailed) as refused:
            check_force(True, missing)
        assert list(refused.value.details) == ["reason"]
