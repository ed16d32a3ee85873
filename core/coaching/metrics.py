"""A scope's decision metrics (docs/design.md#metrics-and-learning-levels): the counters, rolling window, latency
histogram, thresholds and sequential evidence of one scope together, its snapshot and its stored form, and the demotion
test.

Each object is a constant-size state updated once per decision, never recomputed from history; the storage layer
keeps its parts in a row's columns (services/metrics/service.py), and `to_dict` / `from_dict` give it as plain
values. The parts live beside it: core.coaching.counters (decision kinds, counters, window), core.coaching.levels
(thresholds, levels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.coaching.autonomy import decisions_needed
from core.coaching.counters import ACCEPT, SKIP, Counters, RollingWindow, check_kind, wilson_lower_bound
from core.coaching.evidence import TEST_NAME, Evidence, accepts_needed, log_e_promote
from core.coaching.latency import LatencyHistogram
from core.coaching.levels import LevelAssessment, LevelThresholds, assess_level


@dataclass
class MetricsState:
    """Everything one scope (workflow, version, step, operator, global) needs for its metrics."""

    counters: Counters
    window: RollingWindow
    latency: LatencyHistogram
    thresholds: LevelThresholds
    # the sequential test's state; a state stored before it existed starts from its window's counts
    evidence: Evidence

    # what assess() and evidence_view() found, until the state changes (a decision, thresholds, a restart): a
    # decision asks for its scopes' levels before and after, and a scope's state is kept between transactions
    _assessed: LevelAssessment | None = field(default=None, init=False, repr=False, compare=False)
    _viewed: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    # written out rather than generated: a window and evidence left out are made from the thresholds and the window,
    # so that the attributes are never None once built
    def __init__(
        self,
        counters: Counters | None = None,
        window: RollingWindow | None = None,
        latency: LatencyHistogram | None = None,
        thresholds: LevelThresholds | None = None,
        evidence: Evidence | None = None,
    ) -> None:
        self.counters = Counters() if counters is None else counters
        self.latency = LatencyHistogram() if latency is None else latency
        self.thresholds = LevelThresholds() if thresholds is None else thresholds
        if window is None:
            window = RollingWindow(self.thresholds.window)
        elif window.size != self.thresholds.window:
            window.resize(self.thresholds.window)
        self.window = window
        self.evidence = Evidence(window.accepted, window.counted) if evidence is None else evidence
        self._assessed = None
        self._viewed = None

    def set_thresholds(self, thresholds: LevelThresholds) -> None:
        if thresholds is self.thresholds:
            return
        self.thresholds = thresholds
        self.window.resize(thresholds.window)
        self._assessed = self._viewed = None

    def record_suggestion(self) -> None:
        self.counters.record_suggestion()

    def record_decision(
        self, kind: str, latency_ms: float | None = None, *, evidence: bool = True, attentive: bool = False
    ) -> None:
        """Count one decision. `evidence` False: in the counters, window and latency only, not in the sequential
        test (a decision by an operator below the lead's bars, where the workspace takes its evidence from attentive
        operators: docs/autonomy.md#check-suggestions). `attentive`: it came from an attentive operator."""
        check_kind(kind)  # before any mutation, so a bad kind leaves the state untouched
        if latency_ms is not None:
            self.latency.add(latency_ms)
        self._assessed = self._viewed = None
        self.counters.record(kind)
        self.window.append(kind)
        if kind != SKIP and evidence:
            self.evidence.record(kind == ACCEPT, self.thresholds.auto_acceptance, self.thresholds.auto_alpha, attentive)

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
        return {
            "statistic": round(log_e, 4),
            "statistic_kind": "log_e_value",
            "e_value": _round4(math.exp(min(log_e, 700.0))),
            "threshold": round(1.0 / t.auto_alpha, 4),
            "log_threshold": round(math.log(1.0 / t.auto_alpha), 4),
            "decisions_needed_if_all_accepted": needed,
            "test": TEST_NAME,
            "accepted_since_restart": e.accepted,
            "counted_since_restart": e.counted,
            # how many of the decisions in the test came from attentive operators (checks' catch rate and
            # decision times above the lead's bars, docs/autonomy.md#check-suggestions)
            "attentive_since_restart": e.attentive,
            "drop_statistic": round(e.drop, 4),
            "drop_alarm": e.alarm(t.auto_alpha),
        }

    def confidence(self) -> float:
        """docs/design.md#metrics-and-learning-levels: the Wilson lower bound of the rolling acceptance."""
        return round(wilson_lower_bound(self.window.accepted, self.window.counted), 4)

    def snapshot(self) -> dict[str, Any]:
        c, w, a = self.counters, self.window, self.assess()
        body = {
            **c.view(),
            "rolling_acceptance_rate": round(w.rate, 4),
            "confidence": self.confidence(),
            "decision_latency_ms": self.latency.percentiles(),
            "level": a.level,
            "auto_ready": a.auto_ready,
            "window_size": w.size,
            "window_decisions": w.decisions,
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
            # the decisions in the readiness test (since it last restarted) and how many came from attentive
            # operators (docs/autonomy.md#check-suggestions)
            "evidence_decisions": self.evidence.counted,
            "attentive_decisions": self.evidence.attentive,
        }
        # every bar at once, if all the next decisions are accepts (core.coaching.autonomy.decisions_needed)
        body["decisions_needed"] = decisions_needed(body)
        return body

    def to_dict(self) -> dict[str, Any]:
        return {
            "counters": self.counters.to_dict(),
            "window": self.window.to_str(),
            "latency": self.latency.to_dict(),
            "thresholds": self.thresholds.to_dict(),
            "evidence": self.evidence.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> MetricsState:
        d = d or {}
        t = LevelThresholds.from_dict(d.get("thresholds"))
        evidence = d.get("evidence")
        return cls(
            counters=Counters.from_dict(d.get("counters")),
            window=RollingWindow.from_str(d.get("window"), t.window),
            latency=LatencyHistogram.from_dict(d.get("latency")),
            thresholds=t,
            evidence=Evidence.from_dict(evidence) if isinstance(evidence, dict) else None,
        )


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
