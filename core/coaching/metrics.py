"""Decision metrics and learning levels (DESIGN.md §3).

Each object is a constant-size state updated once per decision, never recomputed from history, and
serialisable to JSON-friendly dicts so the storage layer can keep it in a row.
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any

from core.coaching.autonomy import decisions_needed
from core.coaching.evidence import TEST_NAME, Evidence, accepts_needed, log_e_promote
from core.coaching.latency import SCHEME, LatencyHistogram

ACCEPT = "accept"
REJECT = "reject"
CORRECT = "correct"
MANUAL = "manual"
SKIP = "skip"
DECISIONS = (ACCEPT, REJECT, CORRECT, MANUAL, SKIP)

OBSERVATION = "OBSERVATION"
COACHING = "COACHING"
AUTO = "AUTO"
LEVELS = (OBSERVATION, COACHING, AUTO)

# One letter per decision keeps a 50-entry window in a 50-character column.
_LETTER = {ACCEPT: "a", REJECT: "r", CORRECT: "c", MANUAL: "m", SKIP: "s"}
_KIND = {v: k for k, v in _LETTER.items()}
_ATTR = {ACCEPT: "accepted", REJECT: "rejected", CORRECT: "corrected", MANUAL: "manual",
         SKIP: "skipped"}


def _check_kind(kind: str) -> None:
    if kind not in _LETTER:
        raise ValueError(f"unknown decision {kind!r}; expected one of {DECISIONS}")


@functools.lru_cache(maxsize=256)  # a handful of thresholds, assessed several times per decision
def _exact(x: float) -> Fraction:
    # A threshold typed as 0.85 is the float 0.84999999999999997779...; comparing rates against
    # the decimal the user meant makes 17/20 qualify exactly.
    return Fraction(repr(float(x)))


@dataclass
class Counters:
    suggestions: int = 0
    accepted: int = 0
    rejected: int = 0
    corrected: int = 0
    manual: int = 0
    skipped: int = 0

    @property
    def decisions(self) -> int:
        return self.accepted + self.rejected + self.corrected + self.manual + self.skipped

    @property
    def counted(self) -> int:
        """Decisions that count towards acceptance: skips say nothing about the suggestion."""
        return self.accepted + self.rejected + self.corrected + self.manual

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.counted if self.counted else 0.0

    def record_suggestion(self) -> None:
        self.suggestions += 1

    def record(self, kind: str) -> None:
        _check_kind(kind)
        setattr(self, _ATTR[kind], getattr(self, _ATTR[kind]) + 1)

    def to_dict(self) -> dict[str, int]:
        # by hand: dataclasses.asdict deep-copies recursively, and this runs several times per decision
        return {"suggestions": self.suggestions, "accepted": self.accepted, "rejected": self.rejected,
                "corrected": self.corrected, "manual": self.manual, "skipped": self.skipped}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Counters:
        d = d or {}
        return cls(**{f.name: int(d.get(f.name, 0)) for f in fields(cls)})


class RollingWindow:
    """The last `size` decisions, skips included, oldest dropped first."""

    def __init__(self, size: int = 50, entries: str = ""):
        if size < 1:
            raise ValueError("window size must be at least 1")
        bad = set(entries) - set(_KIND)
        if bad:
            raise ValueError(f"unknown decision letters in window: {sorted(bad)}")
        self.size = size
        self._entries = entries[-size:]
        self.accepted = self._entries.count("a")
        self._skipped = self._entries.count("s")

    def append(self, kind: str) -> None:
        _check_kind(kind)
        letter = _LETTER[kind]
        self._entries += letter
        self.accepted += letter == "a"
        self._skipped += letter == "s"
        if len(self._entries) > self.size:
            dropped, self._entries = self._entries[0], self._entries[1:]
            self.accepted -= dropped == "a"
            self._skipped -= dropped == "s"

    def resize(self, size: int) -> None:
        """Change the window size in place, keeping the most recent entries."""
        if size == self.size:
            return
        fresh = RollingWindow(size, self._entries)
        self.size, self._entries = fresh.size, fresh._entries
        self.accepted, self._skipped = fresh.accepted, fresh._skipped

    @property
    def decisions(self) -> int:
        return len(self._entries)

    @property
    def counted(self) -> int:
        return len(self._entries) - self._skipped

    @property
    def rate(self) -> float:
        return self.accepted / self.counted if self.counted else 0.0

    def to_str(self) -> str:
        return self._entries

    @classmethod
    def from_str(cls, s: str | None, size: int = 50) -> RollingWindow:
        return cls(size, s or "")

    def __repr__(self) -> str:
        return f"RollingWindow(size={self.size}, entries={self._entries!r})"


def wilson_lower_bound(successes: int, n: int, z: float = 1.959963984540054) -> float:
    """Lower bound of the Wilson score interval (95% two-sided by default); 0.0 with no evidence."""
    if n == 0:
        return 0.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..n, got {successes}/{n}")
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, (centre - margin) / (1 + z2 / n))


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
        return {"coaching_after": self.coaching_after, "auto_min_window": self.auto_min_window,
                "auto_acceptance": self.auto_acceptance, "window": self.window, "auto_alpha": self.auto_alpha}

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


def assess_level(total_decisions: int, window: RollingWindow,
                 thresholds: LevelThresholds | None = None, evidence: Evidence | None = None) -> LevelAssessment:
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


@dataclass
class MetricsState:
    """Everything one scope (workflow, version, step, operator, global) needs for its metrics."""

    counters: Counters = field(default_factory=Counters)
    window: RollingWindow | None = None
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)
    thresholds: LevelThresholds = field(default_factory=LevelThresholds)
    # the sequential test's state; a state stored before it existed starts from its window's counts
    evidence: Evidence | None = None

    # what assess() and evidence_view() found, until the state changes (a decision, thresholds, a restart): a
    # decision asks for its scopes' levels before and after, and a scope's state is kept between transactions
    _assessed: LevelAssessment | None = field(default=None, init=False, repr=False, compare=False)
    _viewed: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.window is None:
            self.window = RollingWindow(self.thresholds.window)
        elif self.window.size != self.thresholds.window:
            self.window.resize(self.thresholds.window)
        if self.evidence is None:
            self.evidence = Evidence(self.window.accepted, self.window.counted)

    def set_thresholds(self, thresholds: LevelThresholds) -> None:
        if thresholds is self.thresholds:
            return
        self.thresholds = thresholds
        self.window.resize(thresholds.window)
        self._assessed = self._viewed = None

    def record_suggestion(self) -> None:
        self.counters.record_suggestion()

    def record_decision(self, kind: str, latency_ms: float | None = None) -> None:
        _check_kind(kind)  # before any mutation, so a bad kind leaves the state untouched
        if latency_ms is not None:
            self.latency.add(latency_ms)
        self._assessed = self._viewed = None
        self.counters.record(kind)
        self.window.append(kind)
        if kind != SKIP:
            self.evidence.record(kind == ACCEPT, self.thresholds.auto_acceptance, self.thresholds.auto_alpha)

    def restart_evidence(self) -> None:
        """Forget the sequential tests' evidence (at a demotion): AUTO-ready again only on new evidence."""
        self._assessed = self._viewed = None
        self.evidence.restart()

    def assess(self) -> LevelAssessment:
        if self._assessed is None:
            self._assessed = assess_level(self.counters.decisions, self.window, self.thresholds, self.evidence)
        return self._assessed

    def evidence_view(self) -> dict[str, Any]:
        """The promotion test as figures (GET /api/metrics/workflows/<id>): the e-value's log, the threshold
        (1/alpha) it must reach, and how many more accepts in a row would get there."""
        if self._viewed is None:
            self._viewed = self._evidence_view()
        return dict(self._viewed)

    def _evidence_view(self) -> dict[str, Any]:
        t, e = self.thresholds, self.evidence
        log_e = log_e_promote(e.accepted, e.counted, t.auto_acceptance)
        needed = accepts_needed(e.accepted, e.counted, t.auto_acceptance, t.auto_alpha)
        if needed is not None and e.alarm(t.auto_alpha) and needed == 0:
            needed = 1  # the change detector holds readiness back until it calms down
        return {"statistic": round(log_e, 4), "statistic_kind": "log_e_value",
                "e_value": _round4(math.exp(min(log_e, 700.0))),
                "threshold": round(1.0 / t.auto_alpha, 4), "log_threshold": round(math.log(1.0 / t.auto_alpha), 4),
                "decisions_needed_if_all_accepted": needed, "test": TEST_NAME,
                "accepted_since_restart": e.accepted, "counted_since_restart": e.counted,
                "drop_statistic": round(e.drop, 4), "drop_alarm": e.alarm(t.auto_alpha)}

    def confidence(self) -> float:
        """DESIGN.md §3: the Wilson lower bound of the rolling acceptance."""
        return round(wilson_lower_bound(self.window.accepted, self.window.counted), 4)

    def snapshot(self) -> dict[str, Any]:
        c, w, a = self.counters, self.window, self.assess()
        body = {
            "decisions": c.decisions, "suggestions": c.suggestions, "accepted": c.accepted,
            "rejected": c.rejected, "corrected": c.corrected, "manual": c.manual,
            "skipped": c.skipped,
            "acceptance_rate": round(c.acceptance_rate, 4),
            "rolling_acceptance_rate": round(w.rate, 4),
            "confidence": self.confidence(),
            "decision_latency_ms": self.latency.percentiles(),
            "level": a.level, "auto_ready": a.auto_ready,
            "window_size": w.size, "window_decisions": w.decisions,
            "window_counted": w.counted,
            "to_auto": {
                "decisions_to_coaching": a.decisions_to_coaching,
                "window_decisions_needed": a.window_decisions_needed,
                "acceptance_gap": a.acceptance_gap,
                "auto_min_window": self.thresholds.auto_min_window,
                "auto_acceptance": self.thresholds.auto_acceptance,
            },
            "thresholds": self.thresholds.to_dict(),
            "evidence": self.evidence_view(),
        }
        # every bar at once, if all the next decisions are accepts (core.coaching.autonomy.decisions_needed)
        body["decisions_needed"] = decisions_needed(body)
        return body

    def to_dict(self) -> dict[str, Any]:
        return {"counters": self.counters.to_dict(), "window": self.window.to_str(),
                "latency": self.latency.to_dict(), "thresholds": self.thresholds.to_dict(),
                "evidence": self.evidence.to_dict()}

    def to_json(self) -> str:
        """`to_dict()` as compact JSON text, written directly: every decision stores several states, and
        json.dumps of the nested dicts costs more than the rest of writing them. Same content, same order."""
        c, h, t = self.counters, self.latency, self.thresholds
        buckets = h.buckets_json()
        return (f'{{"counters":{{"suggestions":{c.suggestions},"accepted":{c.accepted},"rejected":{c.rejected},'
                f'"corrected":{c.corrected},"manual":{c.manual},"skipped":{c.skipped}}},'
                f'"window":"{self.window.to_str()}",'
                f'"latency":{{"scheme":"{SCHEME}","buckets":{{{buckets}}},"count":{h.count},'
                f'"min":{_number(h.min)},"max":{_number(h.max)}}},'
                f'"thresholds":{{"coaching_after":{t.coaching_after},"auto_min_window":{t.auto_min_window},'
                f'"auto_acceptance":{_number(t.auto_acceptance)},"window":{t.window},'
                f'"auto_alpha":{_number(t.auto_alpha)}}},'
                f'"evidence":{self.evidence.to_json()}}}')

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> MetricsState:
        d = d or {}
        t = LevelThresholds.from_dict(d.get("thresholds"))
        evidence = d.get("evidence")
        return cls(counters=Counters.from_dict(d.get("counters")),
                   window=RollingWindow.from_str(d.get("window"), t.window),
                   latency=LatencyHistogram.from_dict(d.get("latency")), thresholds=t,
                   evidence=Evidence.from_dict(evidence) if isinstance(evidence, dict) else None)


def should_demote(state: MetricsState, thresholds: LevelThresholds | None = None) -> bool:
    """The mirrored test, on an AUTO workflow's spot-check scope: the change detector (a CUSUM e-detector,
    docs/autonomy.md) says acceptance fell below auto_acceptance at level auto_alpha. One early reject is
    not evidence: at the defaults it takes four rejects in a short run."""
    t = thresholds or state.thresholds
    return state.evidence.alarm(t.auto_alpha)


def _round4(x: float) -> float:
    """round(x, 4), the same value: from 2**52 on every float is a whole number, which round() leaves as it is, but
    only after writing it out in decimal (e^700, an e-value's cap: ~16 µs, more than the rest of a snapshot)."""
    return x if abs(x) >= 4503599627370496.0 else round(x, 4)


def _number(x: float | int | None) -> str:
    """A finite number (or None) as JSON, exactly as json.dumps writes it."""
    return "null" if x is None else repr(x) if isinstance(x, float) else str(int(x))


def bucket_start(ts: datetime, granularity: str = "hour") -> datetime:
    """Start of the UTC hour or day holding `ts`; a naive `ts` is taken to be UTC already."""
    ts = ts.replace(tzinfo=timezone.utc) if ts.tzinfo is None else ts.astimezone(timezone.utc)
    if granularity == "hour":
        return ts.replace(minute=0, second=0, microsecond=0)
    if granularity == "day":
        return ts.replace(hour=0, minute=0, second=0, microsecond=0)
    raise ValueError(f"granularity must be 'hour' or 'day', got {granularity!r}")
