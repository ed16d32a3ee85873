"""What the latest decisions did to a scope's promotion evidence (the dashboard's "e-value 24 → 9").

A scope keeps only its current evidence (accepts and counted decisions since the evidence last restarted), never
its history; the decisions themselves are stored. Going back from the current counts through the latest decisions,
newest first, gives the counts (and so the e-value) before and after each of them, exactly, as far back as the
evidence's last restart: before it the counts would go below zero, and the walk stops there. A skip is not counted
and leaves the evidence as it was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from core.coaching.counters import ACCEPT, SKIP
from core.coaching.evidence import accepts_needed, log_e_promote


def _e_value(accepted: int, counted: int, p0: float) -> float:
    return round(math.exp(min(log_e_promote(accepted, counted, p0), 700.0)), 4)


def evidence_trail(
    accepted: int, counted: int, kinds_newest_first: Iterable[str], p0: float, alpha: float
) -> list[dict[str, Any] | None]:
    """For each decision (newest first), the e-value before and after it and the accepts in a row that were
    needed after it (`accepts_needed_after`, 0: ready by the test); None from the decision whose effect the
    current evidence no longer holds (the evidence restarted at it or after it)."""
    out: list[dict[str, Any] | None] = []
    a, n = accepted, counted
    walking = True
    for kind in kinds_newest_first:
        if not walking:
            out.append(None)
            continue
        if kind == SKIP:
            e = _e_value(a, n, p0)
            out.append(
                {"e_value_before": e, "e_value_after": e, "accepts_needed_after": accepts_needed(a, n, p0, alpha)}
            )
            continue
        before_a, before_n = a - (kind == ACCEPT), n - 1
        if before_n < 0 or before_a < 0 or before_a > before_n:
            walking = False  # the evidence restarted here or later: this decision is not in it
            out.append(None)
            continue
        out.append(
            {
                "e_value_before": _e_value(before_a, before_n, p0),
                "e_value_after": _e_value(a, n, p0),
                "accepts_needed_after": accepts_needed(a, n, p0, alpha),
            }
        )
        a, n = before_a, before_n
    return out
