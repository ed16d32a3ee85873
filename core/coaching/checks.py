"""Check suggestions (issue #41, item 6): now and then a coaching suggestion is shown with one param set to a value
reviewers corrected away before. It never runs: accepting it is a miss, rejecting or correcting it (or doing the step
by hand) a catch. An operator's catch rate, with their share of fast accepts, says whether they are attentive; a
workspace may take its readiness evidence from attentive operators' decisions only.

Pure rules; services/coaching/checks.py opens and decides checks, services/metrics/reviewers.py keeps the settings.

- **settings**: `check_rate` (0: off, the default; at most MAX_CHECK_RATE) draws which coaching suggestions are
  checks; `evidence_from` (`all`, the default, or `attentive`) and its bars `min_checks`, `min_catch_rate`,
  `max_fast_share` say who is attentive.
- **the change**: one top-level param of the suggestion, set to the `before` of a correction reviewers made to the
  step (a value they corrected away), different from what the suggestion holds now. None: no such correction, no
  check.
- **attentive**: at least `min_checks` checks with outcomes, a catch rate (catches / checks) of at least
  `min_catch_rate`, and a share of fast accepts (accepts under the workspace's floor, of their accepts; none
  accepted: 0) of at most `max_fast_share`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.coaching.counters import ACCEPT, CORRECT, MANUAL, REJECT, SKIP
from core.coaching.paths import MISSING, canonical, join_path
from core.errors import ValidationFailed

PURPOSE = "check"
MAX_CHECK_RATE = 0.2
ALL, ATTENTIVE = "all", "attentive"
EVIDENCE_FROM = (ALL, ATTENTIVE)
MISS, CATCH = "miss", "catch"
# a check's decision row says it was a check and how it came out (services/models/coaching.py Decision.outcome): the
# readers of decisions as evidence (series, reviewers' times, the step's trail, replay) leave these out
OUTCOMES = {MISS: "check_miss", CATCH: "check_catch", None: "check_none"}
DECISION_OUTCOMES = tuple(OUTCOMES.values())


@dataclass(frozen=True)
class Bars:
    """Who counts as attentive (docs/autonomy.md#check-suggestions): the lead's bars, or these defaults."""

    min_checks: int = 5
    min_catch_rate: float = 0.8
    max_fast_share: float = 0.5


DEFAULTS: dict[str, Any] = {
    "check_rate": 0.0,
    "evidence_from": ALL,
    "min_checks": Bars.min_checks,
    "min_catch_rate": Bars.min_catch_rate,
    "max_fast_share": Bars.max_fast_share,
}


def _number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValidationFailed(f"{name} is a number", details={name: ["must be a number"]})
    if not low <= value <= high:
        raise ValidationFailed(f"{name} is out of range", details={name: [f"must be between {low:g} and {high:g}"]})
    return float(value)


def check_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The given settings checked (None: back to the default), or a ValidationFailed naming the field."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            out[name] = None
        elif name == "check_rate":
            out[name] = _number(name, value, 0.0, MAX_CHECK_RATE)
        elif name in ("min_catch_rate", "max_fast_share"):
            out[name] = _number(name, value, 0.0, 1.0)
        elif name == "min_checks":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
                raise ValidationFailed(
                    "min_checks is a whole number of checks",
                    details={name: ["must be a whole number between 1 and 10000"]},
                )
            out[name] = value
        elif name == "evidence_from":
            if value not in EVIDENCE_FROM:
                raise ValidationFailed(
                    "evidence_from is all or attentive", details={name: [f"must be one of {list(EVIDENCE_FROM)}"]}
                )
            out[name] = value
        else:
            raise ValidationFailed(f"unknown setting {name!r}", details={name: ["unknown field"]})
    return out


def bars_of(settings: dict[str, Any]) -> Bars:
    return Bars(int(settings["min_checks"]), float(settings["min_catch_rate"]), float(settings["max_fast_share"]))


# -- the change a check makes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckChange:
    param: str  # a top-level key of the params
    shown: Any  # the value reviewers corrected away, shown instead
    real: Any  # what the real suggestion holds

    def to_dict(self) -> dict[str, Any]:
        return {"param": self.param, "shown": self.shown, "real": self.real}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CheckChange:
        return cls(str(d["param"]), d.get("shown"), d.get("real"))


def candidates(params: Any, corrected: Iterable[tuple[str, Any]]) -> list[CheckChange]:
    """The changes a check of these params can make, from corrections (field, before) of the step: a top-level param
    the params hold, set back to a value a correction changed it from, which is not its value now. One per
    (param, value), in a stable order (by param, then value)."""
    if not isinstance(params, dict):
        return []
    by_path = {join_path([k]): k for k in params}
    found: dict[tuple[str, str], CheckChange] = {}
    for field, before in corrected:
        key = by_path.get(field)
        if key is None or before is MISSING or canonical(before) == canonical(params[key]):
            continue
        found.setdefault((key, canonical(before)), CheckChange(key, before, params[key]))
    return [found[k] for k in sorted(found)]


def choose(params: Any, corrected: Iterable[tuple[str, Any]], rng: random.Random) -> CheckChange | None:
    """One of the candidates, drawn with `rng` (a seeded one repeats); None when there is none."""
    options = candidates(params, corrected)
    if not options:
        return None
    return options[0] if len(options) == 1 else options[rng.randrange(len(options))]


def shown_params(params: dict[str, Any], change: CheckChange) -> dict[str, Any]:
    return {**params, change.param: change.shown}


def drawn(rate: float, rng: random.Random) -> bool:
    """Whether this suggestion is drawn to be a check (never at rate 0: no number is drawn then)."""
    return rate > 0 and rng.random() < rate


# -- outcomes and who is attentive -----------------------------------------------------------------------------------


def outcome(kind: str) -> str | None:
    """A check's decision: accept is a miss; reject, correct, or doing it by hand (it did not run) a catch; skip
    says nothing."""
    if kind == ACCEPT:
        return MISS
    if kind in (REJECT, CORRECT, MANUAL):
        return CATCH
    if kind == SKIP:
        return None
    raise ValueError(f"unknown decision {kind!r}")


def attentive(checks: int, catches: int, accepts: int, fast_accepts: int, bars: Bars) -> bool:
    """At least min_checks checks, catch rate >= min_catch_rate, fast-accept share <= max_fast_share."""
    if checks < max(1, bars.min_checks):
        return False
    if catches / checks < bars.min_catch_rate:
        return False
    share = fast_accepts / accepts if accepts else 0.0
    return share <= bars.max_fast_share


def figures(checks: int, catches: int, accepts: int, fast_accepts: int, bars: Bars) -> dict[str, Any]:
    """One operator's check figures across the workspace (the reviewers' route): their checks with an outcome,
    catches, misses, catch rate (None before any), their accepts and fast accepts as counted for the bar (from when
    checks or the restriction were on), and whether they are attentive now."""
    return {
        "checks": checks,
        "catches": catches,
        "misses": checks - catches,
        "catch_rate": round(catches / checks, 4) if checks else None,
        "accepts": accepts,
        "fast_accepts": fast_accepts,
        "fast_accept_share": round(fast_accepts / accepts, 4) if accepts else None,
        "attentive": attentive(checks, catches, accepts, fast_accepts, bars),
    }
