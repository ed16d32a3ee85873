"""Small statistics helpers shared by the Coach and LangGraph benchmark sides."""

from __future__ import annotations

import gc
import math
from collections.abc import Generator, Sequence


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


def slices(items: list, rounds: int) -> list[list]:
    """`items` in `rounds` consecutive parts, as even as can be (the first ones one longer)."""
    size, extra = divmod(len(items), rounds)
    out, at = [], 0
    for r in range(rounds):
        n = size + (1 if r < extra else 0)
        out.append(items[at : at + n])
        at += n
    return out


def take_turns(engines: dict[str, Generator[None, None, dict]]) -> list[dict]:
    """Run the engines' loops in turns: each generator sets up until its first yield, then runs one slice of its
    timed loop per turn; its return value is its summary. Summaries in the engines' order."""
    results: dict[str, dict] = {}
    while len(results) < len(engines):
        for name, turns in engines.items():
            if name in results:
                continue
            try:
                next(turns)
            except StopIteration as done:
                results[name] = done.value
    return [results[name] for name in engines]


def finish(turns: Generator[None, None, dict]) -> dict:
    """One engine's loop run through, alone."""
    return take_turns({"one": turns})[0]
