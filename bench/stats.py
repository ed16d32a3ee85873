"""Small statistics helpers shared by the Coach and LangGraph benchmark sides."""

from __future__ import annotations

import gc
import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Return the q-th percentile (0 <= q <= 100) of ``values``.

    Uses linear interpolation between closest ranks (the same definition as
    ``numpy.percentile``'s default and ``statistics.quantiles(method="inclusive")``),
    so both benchmark sides report identical figures without depending on numpy:
    the value sits at fractional index ``(n - 1) * q / 100`` of the sorted data.
    p0 is the minimum, p100 the maximum, and a single value is its own percentile.
    """
    if not values:
        raise ValueError("percentile() of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within [0, 100], got {q!r}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    if lo == hi:
        return float(ordered[lo])
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def settle() -> None:
    """What a long-running server does once it is set up (wsgi.py), done by both engines before their timed loops:
    everything made so far (modules, mappers, compiled graphs) is frozen out of the cyclic collector's sight, so a
    full collection during the loop does not walk it all again."""
    gc.collect()
    gc.freeze()
