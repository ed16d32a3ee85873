"""Decision latency as a histogram (docs/design.md#metrics-and-learning-levels): constant-size, mergeable, its
quantiles within a few percent."""

from __future__ import annotations

import bisect
import math
from typing import Any

# Latency buckets: 8 per doubling, so each bucket is 2**(1/8) ≈ 9% wide and its geometric middle
# is within 4.5% of any value in it. Bucket 0 holds sub-millisecond values; the last one holds
# everything beyond an hour. 177 buckets, stored sparsely.
_PER_DOUBLING = 8
_MAX_MS = 3_600_000
_LAST = 1 + math.ceil(math.log2(_MAX_MS) * _PER_DOUBLING)
SCHEME = f"log2/{_PER_DOUBLING}/{_MAX_MS}"  # written with the buckets: a reader of another scheme refuses them


PERCENTILES = {"p50": 0.5, "p90": 0.9}  # what a snapshot reports


def _bucket(ms: float) -> int:
    if ms < 1:
        return 0
    return min(_LAST, 1 + math.floor(math.log2(ms) * _PER_DOUBLING))


def latency_bucket(ms: float) -> int:
    """The bucket a latency counts in; a ValueError for one that is not finite (a slightly negative one, from a clock
    adjustment, is taken as 0)."""
    ms = float(ms)
    if not math.isfinite(ms):
        raise ValueError(f"latency must be finite, got {ms}")
    return _bucket(max(0.0, ms))


def rank(q: float, count: int) -> int:
    """The q-quantile's rank (1-based) among `count` values, as the histogram counts it."""
    if not 0.0 <= q <= 1.0:
        raise ValueError("q must be within 0..1")
    return max(1, math.ceil(q * count))


def _reported(i: int, lo: float, hi: float) -> int:
    """What a quantile falling in bucket `i` reports: the bucket's geometric middle, within the values' range."""
    if i == 0:
        rep = 0.0
    elif i == _LAST:
        rep = hi
    else:
        rep = 2 ** ((i - 0.5) / _PER_DOUBLING)
    return int(round(min(max(rep, lo), hi)))


def reported(ms: float, lo: float, hi: float) -> int:
    """The histogram's figure for a quantile whose value (the value at its `rank`) is `ms`, among values from `lo` to
    `hi`: what a histogram of the same values reports, without one (a quantile's bucket is that value's, buckets
    being in value order). Negative values are taken as 0, as `add` takes them."""
    return _reported(_bucket(max(0.0, float(ms))), max(0.0, float(lo)), max(0.0, float(hi)))


class LatencyHistogram:
    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.min: float | None = None
        self.max: float | None = None
        # made when first needed, then kept up to date by add(): the bucket numbers in order
        self._order: list[int] | None = None

    @classmethod
    def of(cls, buckets: dict[int, int], minimum: float | None, maximum: float | None) -> LatencyHistogram:
        """The histogram of these bucket counts and this range (as a database keeps them)."""
        h = cls()
        h.buckets = {int(i): int(n) for i, n in buckets.items() if int(n)}
        h.count = sum(h.buckets.values())
        h.min, h.max = minimum, maximum
        return h

    def add(self, ms: float) -> None:
        i = latency_bucket(ms)
        ms = max(0.0, float(ms))  # clock adjustments can make a latency slightly negative
        n = self.buckets[i] = self.buckets.get(i, 0) + 1
        if self._order is not None and n == 1:
            bisect.insort(self._order, i)
        self.count += 1
        self.min = ms if self.min is None else min(self.min, ms)
        self.max = ms if self.max is None else max(self.max, ms)

    def quantile(self, q: float) -> int | None:
        if not self.count:
            rank(q, 1)  # still refuses a q out of range
            return None
        wanted = rank(q, self.count)
        seen = 0
        for i in self._sorted():
            seen += self.buckets[i]
            if seen >= wanted:
                break
        return _reported(i, self.min or 0.0, self.max or 0.0)

    def percentiles(self) -> dict[str, int | None]:
        return {name: self.quantile(q) for name, q in PERCENTILES.items()}

    def _sorted(self) -> list[int]:
        if self._order is None:
            self._order = sorted(self.buckets)
        return self._order

    def merge(self, other: LatencyHistogram) -> LatencyHistogram:
        self._order = None
        for i, n in other.buckets.items():
            self.buckets[i] = self.buckets.get(i, 0) + n
        self.count += other.count
        for attr, pick in (("min", min), ("max", max)):
            mine, theirs = getattr(self, attr), getattr(other, attr)
            if theirs is not None:
                setattr(self, attr, theirs if mine is None else pick(mine, theirs))
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheme": SCHEME,
            "buckets": {str(i): n for i, n in sorted(self.buckets.items())},
            "count": self.count,
            "min": self.min,
            "max": self.max,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> LatencyHistogram:
        h = cls()
        if not d:
            return h
        if d.get("scheme", SCHEME) != SCHEME:
            raise ValueError(f"latency histogram scheme {d.get('scheme')!r} is not {SCHEME!r}")
        h.buckets = {int(i): int(n) for i, n in (d.get("buckets") or {}).items() if int(n)}
        h.count = sum(h.buckets.values())
        h.min, h.max = d.get("min"), d.get("max")
        return h
