"""Anytime-valid evidence for AUTO readiness and demotion (docs/design.md#metrics-and-learning-levels,
docs/autonomy.md).

Plain Python and the math module only. Every function here is O(1) in the number of decisions recorded: the
state is three numbers (accepts and counted decisions since the evidence last restarted, and a CUSUM
statistic), updated once per decision.

Promotion: a beta-binomial mixture e-process for H0: p <= p0 (p = acceptance, p0 = `auto_acceptance`). Its
value after `a` accepts among `n` counted decisions is the Bayes factor, with a uniform prior on (p0, 1],

    E(a, n) = ∫_{p0}^{1} p^a (1-p)^(n-a) dp / ((1 - p0) · p0^a (1-p0)^(n-a))
            = B(a+1, n-a+1) · I_{1-p0}(n-a+1, a+1) / ((1 - p0) · p0^a (1-p0)^(n-a)),

a nonnegative supermartingale under every p <= p0, so by Ville's inequality P(E ever >= 1/alpha) <= alpha
(Howard, Ramdas, McAuliffe, Sekhon 2021; Ramdas, Grünwald, Vovk, Shafer 2023).

Recency and demotion: a CUSUM (Page 1954) of the log-likelihood ratio of a lower acceptance p1 = p0 - DROP
against p0, max(0, S + log(L(p1)/L(p0))), is an e-detector (Shin, Ramdas, Rinaldo 2023): under p >= p0 its
average run length to a false alarm at 1/alpha is at least 1/alpha (in practice far longer). While it is at
or above log(1/alpha) the scope is not AUTO-ready; at RESTART * log(1/alpha) the promotion evidence restarts
from nothing. In the spot-check scope of an AUTO workflow, the crossing of log(1/alpha) is the evidence for
demotion.
"""

from __future__ import annotations

import functools
import math
from typing import Any

# How far below the threshold the change detector looks: p1 = p0 - DROP (0.65 for the default 0.85).
DROP = 0.20
# The CUSUM level (in units of log(1/alpha)) at which the promotion evidence restarts. Each restart is a fresh
# chance of a false AUTO-ready, so restarts are kept rare at or below p0 (bench/autonomy.py: at 2 the share
# ready within 1,000 decisions at 0.85 was 4.8%, at 3 it is 3.5-3.9%); readiness is held back earlier, at 1.
RESTART = 3.0
TEST_NAME = "beta-binomial mixture e-process (uniform prior on (p0, 1]) with CUSUM restart"
_EPS = 1e-12
_MAX_NEEDED = 100_000


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-13:
            break
    return h


def log_betainc(a: float, b: float, x: float) -> float:
    """log of the regularized incomplete beta function I_x(a, b), a, b > 0, accurate when it is tiny."""
    if x <= 0.0:
        return -math.inf
    if x >= 1.0:
        return 0.0
    front = a * math.log(x) + b * math.log1p(-x) - _lbeta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return front + math.log(_betacf(a, b, x)) - math.log(a)
    # I_x(a, b) = 1 - I_{1-x}(b, a); the complement is small here, so log1p keeps the precision
    other = math.exp(front + math.log(_betacf(b, a, 1.0 - x)) - math.log(b))
    return math.log1p(-min(other, 1.0 - 1e-300))


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    return math.exp(log_betainc(a, b, x))


def _clamp(p0: float) -> float:
    return min(max(p0, _EPS), 1.0 - 1e-9)


def log_e_promote(accepted: int, counted: int, p0: float) -> float:
    """log E(a, n) of the mixture e-process for H0: acceptance <= p0 (module docstring)."""
    if counted <= 0:
        return 0.0
    return _log_e_exact(accepted, counted - accepted, _clamp(p0))


def promotion_ready(accepted: int, counted: int, p0: float, alpha: float) -> bool:
    """log E(a, n) >= log(1/alpha). While the observed rate is at most p0 the mixture is at most 1 (the
    likelihood ratio is largest at p0 over (p0, 1]): no continued fraction on the decision path then."""
    if accepted <= counted * p0 or p0 >= 1.0:
        return False
    goal = math.log(1.0 / alpha)
    # the mixture is at most the likelihood ratio at the best p (the observed rate): a cheap bound first
    p0 = _clamp(p0)
    rejected, rate = counted - accepted, accepted / counted
    bound = accepted * math.log(rate / p0) + (rejected * math.log((1.0 - rate) / (1.0 - p0)) if rejected else 0.0)
    if bound < goal:
        return False
    return log_e_promote(accepted, counted, p0) >= goal


@functools.lru_cache(maxsize=4096)
def _log_e_exact(a: int, b: int, p0: float) -> float:
    return (
        _lbeta(a + 1, b + 1)
        + log_betainc(b + 1, a + 1, 1.0 - p0)
        - math.log1p(-p0)
        - a * math.log(p0)
        - b * math.log1p(-p0)
    )


def accepts_needed(accepted: int, counted: int, p0: float, alpha: float) -> int | None:
    """How many more consecutive accepts would make log E reach log(1/alpha); None if never. E grows with
    every accept for a fixed number of rejects (each p in (p0, 1] has p/p0 > 1), so this is the smallest
    number of accepts that is enough beside these rejects, less the accepts already made: cached per number
    of rejects, O(1) per decision."""
    if p0 >= 1.0:
        return None
    enough = _accepts_enough(counted - accepted, _clamp(p0), alpha)
    return None if enough is None else max(0, enough - accepted)


@functools.lru_cache(maxsize=4096)
def _accepts_enough(rejected: int, p0: float, alpha: float) -> int | None:
    hi = max(1, int(rejected * p0 / (1.0 - p0)))  # at or below the observed rate p0 there is no evidence
    while not promotion_ready(hi, hi + rejected, p0, alpha):
        hi *= 2
        if hi > _MAX_NEEDED:
            return None
    lo = hi // 2 if hi > 1 else 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if promotion_ready(mid, mid + rejected, p0, alpha):
            hi = mid
        else:
            lo = mid
    return hi


@functools.lru_cache(maxsize=256)
def cusum_steps(p0: float) -> tuple[float, float]:
    """The CUSUM's increments (on an accept, on any other counted decision): log L(p1)/L(p0), p1 = p0 - DROP."""
    p0 = _clamp(p0)
    p1 = max(p0 - DROP, p0 / 4)
    return math.log(p1 / p0), math.log((1.0 - p1) / (1.0 - p0))


class Evidence:
    """The sequential test's state: accepts and counted decisions since the last restart, and the CUSUM; and how
    many of those counted decisions came from attentive operators (docs/autonomy.md#check-suggestions: said with
    the evidence, not part of the test)."""

    __slots__ = ("accepted", "counted", "drop", "attentive")

    def __init__(self, accepted: int = 0, counted: int = 0, drop: float = 0.0, attentive: int = 0):
        self.accepted, self.counted, self.drop = int(accepted), int(counted), float(drop)
        self.attentive = int(attentive)

    def record(self, accepted: bool, p0: float, alpha: float, attentive: bool = False) -> None:
        """One counted (non-skip) decision. The CUSUM at log(1/alpha) holds readiness back (and is the demotion
        test); at RESTART * log(1/alpha) the drop is taken as real and the promotion evidence restarts."""
        up, down = cusum_steps(p0)
        drop = self.drop + (up if accepted else down)
        if drop >= RESTART * math.log(1.0 / alpha):
            self.restart()
            return
        self.drop = drop if drop > 0.0 else 0.0
        self.counted += 1
        self.accepted += accepted
        self.attentive += attentive

    def alarm(self, alpha: float) -> bool:
        """The CUSUM says acceptance dropped below p0, at level alpha (the demotion test)."""
        return self.drop >= math.log(1.0 / alpha)

    def ready(self, p0: float, alpha: float) -> bool:
        return not self.alarm(alpha) and promotion_ready(self.accepted, self.counted, p0, alpha)

    def restart(self) -> None:
        self.accepted = self.counted = self.attentive = 0
        self.drop = 0.0

    def log_e(self, p0: float) -> float:
        return log_e_promote(self.accepted, self.counted, p0)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "counted": self.counted, "drop": self.drop, "attentive": self.attentive}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        drop = float(d.get("drop", 0.0))
        if not math.isfinite(drop) or drop < 0:
            drop = 0.0
        counted = max(0, int(d.get("counted", 0)))
        return cls(max(0, int(d.get("accepted", 0))), counted, drop, min(counted, max(0, int(d.get("attentive", 0)))))

    def __repr__(self) -> str:
        return (
            f"Evidence(accepted={self.accepted}, counted={self.counted}, drop={self.drop:.3f}, "
            f"attentive={self.attentive})"
        )
