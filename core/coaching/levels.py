"""Learning levels (docs/design.md#metrics-and-learning-levels): the thresholds a scope is held to and what its
decisions say about its level (OBSERVATION, COACHING, AUTO), with the sequential test (core.coaching.evidence) deciding
AUTO-readiness.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields
from fractions import Fraction
from typing import Any

from core.coaching.counters import RollingWindow
from core.coaching.evidence import Evidence

OBSERVATION = "OBSERVATION"
COACHING = "COACHING"
AUTO = "AUTO"
LEVELS = (OBSERVATION, COACHING, AUTO)


@functools.lru_cache(maxsize=256)  # a handful of thresholds, assessed several times per decision
def _exact(x: float) -> Fraction:
    # A threshold typed as 0.85 is the float 0.84999999999999997779...; comparing rates against
    # the decimal the user meant makes 17/20 qualify exactly.
    return Fraction(repr(float(x)))


@dataclass
class LevelThresholds:
    coaching_after: int = 10
    auto_min_window: int = 20
    auto_acceptance: float = 0.85
    window: int = 50
    auto_alpha: float = 0.05  # the sequential tests' error level (docs/autonomy.md)

    def __post_init__(self) -> None:
        if self.coaching_after < 0 or self.auto_min_window < 1 or self.window < 1:
            raise ValueError("thresholds must be non-negative and the window at least 1")
        if not 0.0 <= self.auto_acceptance <= 1.0:
            raise ValueError("auto_acceptance must be within 0..1")
        if not (isinstance(self.auto_alpha, (int, float)) and 0.0 < self.auto_alpha < 0.5):
            raise ValueError("auto_alpha must be more than 0 and less than 0.5")
        if self.auto_min_window > self.window:
            # Otherwise AUTO could never be reached and nobody would be told why.
            raise ValueError("auto_min_window cannot exceed the window size")

    def to_dict(self) -> dict[str, Any]:
        return {
            "coaching_after": self.coaching_after,
            "auto_min_window": self.auto_min_window,
            "auto_acceptance": self.auto_acceptance,
            "window": self.window,
            "auto_alpha": self.auto_alpha,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> LevelThresholds:
        d = d or {}
        kw: dict[str, Any] = {}
        for name in (f.name for f in fields(cls)):
            if name in d and d[name] is not None:
                kw[name] = float(d[name]) if name in ("auto_acceptance", "auto_alpha") else int(d[name])
        return cls(**kw)


@dataclass(frozen=True)
class LevelAssessment:
    level: str
    auto_ready: bool
    decisions_to_coaching: int
    acceptance_gap: float
    window_decisions_needed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def assess_level(
    total_decisions: int,
    window: RollingWindow,
    thresholds: LevelThresholds | None = None,
    evidence: Evidence | None = None,
) -> LevelAssessment:
    """What the evidence says. AUTO-ready when the sequential test (core.coaching.evidence, docs/autonomy.md)
    shows acceptance >= auto_acceptance at level auto_alpha, and the window holds at least auto_min_window
    counted decisions: a window of skips (or 3 accepts among 17 skips) is not evidence that suggestions are
    good. `evidence` defaults to the window's own counts (what a state stored before the test had)."""
    t = thresholds or LevelThresholds()
    if evidence is None:
        evidence = Evidence(window.accepted, window.counted)
    needed = max(0, t.auto_min_window - window.counted)
    # exact: rate >= threshold as integers (accepted/counted >= num/den), no float rounding at the edge
    target = _exact(t.auto_acceptance)
    num, den = target.numerator, target.denominator
    accepted, counted = window.accepted, window.counted
    if counted:
        short = num * counted - accepted * den  # target - rate = short / (den * counted)
        gap = round(short / (den * counted), 4) if short > 0 else 0.0
    else:  # no evidence: the whole target is missing
        short, gap = num, round(num / den, 4)
    to_coaching = max(0, t.coaching_after - total_decisions)
    if to_coaching:
        level = OBSERVATION
    elif needed == 0 and evidence.ready(t.auto_acceptance, t.auto_alpha):
        level = AUTO
    else:
        level = COACHING
    return LevelAssessment(level, level == AUTO, to_coaching, gap, needed)
