"""Whether an operator is attentive (docs/autonomy.md#evidence-from-attentive-reviews; the rules:
core/coaching/checks.py): their check figures (metric scope `check`/<operator>: a check's miss stored as an accept, a
catch as a reject) and their fast accepts (scope `fast`/<operator>: a fast accept stored as an accept, the others as
rejects), read under the workspace's bars. Written by services/coaching (checks.py, counting.py), read by the
reviewers' figures (services/metrics/reviewers.py) and the evidence's restriction (services/coaching/counting.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.coaching import checks as C
from services.metrics import review_settings
from services.metrics import service as metrics

CHECK_SCOPE = "check"  # (check, operator): their checks' outcomes, workspace-wide
FAST_SCOPE = "fast"  # (fast, operator): their accepts, a fast one stored as an accept, the others as rejects


def operator_figures(
    session: Session, workspace_id: str, operators: list[str], settings: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """Each operator's check figures across the workspace (core.coaching.checks.figures), two queries."""
    settings = settings or review_settings.get_floor(session, workspace_id)
    bars = C.bars_of(settings)
    checked = metrics.load_many(session, workspace_id, CHECK_SCOPE, operators)
    fast = metrics.load_many(session, workspace_id, FAST_SCOPE, operators)
    out = {}
    for name in operators:
        c, f = checked.get(name), fast.get(name)
        checks = c.counters.counted if c else 0
        catches = checks - c.counters.accepted if c else 0
        accepts = f.counters.counted if f else 0
        out[name] = C.figures(checks, catches, accepts, f.counters.accepted if f else 0, bars)
    return out


def is_attentive(session: Session, workspace_id: str, operator: str, settings: dict[str, Any]) -> bool:
    """Whether the operator clears the lead's bars now (their figures as this transaction sees them)."""
    c = metrics.load(session, workspace_id, CHECK_SCOPE, operator)
    f = metrics.load(session, workspace_id, FAST_SCOPE, operator)
    checks = c.counters.counted
    return C.attentive(
        checks, checks - c.counters.accepted, f.counters.counted, f.counters.accepted, C.bars_of(settings)
    )
