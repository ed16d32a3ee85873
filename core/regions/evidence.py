"""A region's readiness evidence with its share of the scope's false-ready level (docs/autonomy.md#regions).

The guarantee is for a scope's regions as a whole: P(some region of the scope is ever called AUTO-ready while its
true acceptance is <= auto_acceptance) <= auto_alpha. Each condition version of a scope (a region created, or its
`when` changed: the scope's counter `j` = 1, 2, 3 … is never reused, a removed region's versions included) gets

    alpha_j = auto_alpha * 6 / (pi^2 * j^2),     sum over j >= 1 of alpha_j = auto_alpha,

and its own e-process over the decisions made after that version was fixed (the same test and change detector as a
step: core.coaching.evidence, run by a MetricsState whose auto_alpha is alpha_j). Each version's e-process is valid
at its own alpha_j (Ville's inequality); by the union bound the scope's regions together are falsely ready with
probability at most sum alpha_j <= auto_alpha, however many versions a lead writes and whenever the tests are read.
Decisions before a version was fixed are never counted for it: changing `when` restarts the evidence.
"""

from __future__ import annotations

import math
from typing import Any

from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState

_SHARE = 6.0 / (math.pi**2)


def alpha_share(alpha: float, version: int) -> float:
    """The j-th condition version's share of the scope's level: alpha * 6 / (pi^2 j^2)."""
    if version < 1:
        raise ValueError("condition versions count from 1")
    return alpha * _SHARE / (version * version)


def region_thresholds(scope: LevelThresholds, version: int) -> LevelThresholds:
    """The scope's thresholds with auto_alpha replaced by the version's share."""
    d = scope.to_dict()
    d["auto_alpha"] = alpha_share(scope.auto_alpha, version)
    return LevelThresholds(**d)


def fresh_state(scope: LevelThresholds, version: int) -> MetricsState:
    """The state of a new condition version: nothing counted (evidence restarts when `when` changes)."""
    return MetricsState(thresholds=region_thresholds(scope, version))


def region_snapshot(state: MetricsState, version: int, scope_alpha: float) -> dict[str, Any]:
    """The region's evidence as a step's snapshot, plus the figures of its share: `decisions`, `acceptance`,
    `e_value`, `threshold` (1/alpha_j), `auto_ready`, `decisions_needed`, `alpha_share`, `condition_version`."""
    snap = state.snapshot()
    ev = snap["evidence"]
    return {
        "decisions": snap["decisions"],
        "acceptance": snap["acceptance_rate"],
        "e_value": ev["e_value"],
        "threshold": ev["threshold"],
        "auto_ready": snap["auto_ready"],
        "decisions_needed": snap["decisions_needed"],
        "level": snap["level"],
        "alpha_share": state.thresholds.auto_alpha,
        "scope_alpha": scope_alpha,
        "condition_version": version,
        "metrics": snap,
    }
