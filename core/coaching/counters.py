"""What was decided (docs/design.md#metrics-and-learning-levels): the decision kinds, the running counters and the
rolling window of the last decisions, and the Wilson bound on a rate. Constant-size states, updated once per decision,
that round-trip through
JSON-friendly values so storage can keep them in a row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

ACCEPT = "accept"
REJECT = "reject"
CORRECT = "correct"
MANUAL = "manual"
SKIP = "skip"
DECISIONS = (ACCEPT, REJECT, CORRECT, MANUAL, SKIP)

# One letter per decision keeps a 50-entry window in a 50-character column.
_LETTER = {ACCEPT: "a", REJECT: "r", CORRECT: "c", MANUAL: "m", SKIP: "s"}
_KIND = {v: k for k, v in _LETTER.items()}
_ATTR = {ACCEPT: "accepted", REJECT: "rejected", CORRECT: "corrected", MANUAL: "manual", SKIP: "skipped"}


def check_kind(kind: str) -> None:
    """A ValueError naming the known decisions, for anything else."""
    if kind not in _LETTER:
        raise ValueError(f"unknown decision {kind!r}; expected one of {DECISIONS}")


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
        check_kind(kind)
        setattr(self, _ATTR[kind], getattr(self, _ATTR[kind]) + 1)

    def view(self) -> dict[str, Any]:
        """The counts as a snapshot shows them (core.coaching.metrics, core.coaching.totals): the decisions, the
        suggestions, each kind's count and the acceptance rate."""
        return {"decisions": self.decisions, **self.to_dict(), "acceptance_rate": round(self.acceptance_rate, 4)}

    def to_dict(self) -> dict[str, int]:
        # by hand: dataclasses.asdict deep-copies recursively, and this runs several times per decision
        return {
            "suggestions": self.suggestions,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "corrected": self.corrected,
            "manual": self.manual,
            "skipped": self.skipped,
        }

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
        check_kind(kind)
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
