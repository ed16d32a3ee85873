"""Check suggestions (docs/autonomy.md#check-suggestions; the rules: core/coaching/checks.py): drawing one when a
coaching suggestion is opened (a tool step's, or an agent step's reviewed call: services/agents/service.py), and
deciding one. A check never runs: its decision counts for its operator's check
figures only (metric scope `check`/<operator>: an accept, a miss, is stored as an accept; a catch as a reject), never
in the step's, workflow's or region's evidence, the session's stats or the correction pack; the real suggestion is
opened at once. Each runs in the caller's transaction."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from core.coaching import checks as C
from core.coaching.corrections import PackStats
from core.coaching.counters import ACCEPT, REJECT
from core.execution import states as S
from core.templating import TemplateFailure
from services.audit import service as audit
from services.coaching import answers, corrections
from services.executions import service as executions
from services.metrics import review_settings
from services.metrics import service as metrics
from services.metrics.attention import CHECK_SCOPE
from services.models.coaching import Decision, Suggestion
from services.unit_of_work import UnitOfWork


def corrected_away(session: Session, workflow_id: str, step_id: str) -> list[tuple[str, Any]]:
    """(field, before) of each change the step's corrections made: the values reviewers corrected away. The pack's
    changes whether it is enabled or not (what reviewers did, not what is applied). `step_id`: a step, or an agent
    step's calls of one tool (`<agent step>:<tool>`, whose pack its calls' corrections make)."""
    pack = corrections.find(session, workflow_id, step_id)
    if pack is None:
        return []
    return [(g.field, g.before) for g in PackStats.from_dict(pack.stats).groups.values()]


def draw(
    session: Session, workspace_id: str, workflow_id: str, step_id: str, suggested: Any, rng: random.Random
) -> C.CheckChange | None:
    """Whether this coaching suggestion is shown as a check, and its change: the workspace's check_rate drawn with
    the runner's `rng` (nothing drawn at rate 0), then one of the values reviewers corrected away."""
    rate = review_settings.get_floor(session, workspace_id)["check_rate"]
    if not C.drawn(rate, rng):
        return None
    return C.choose(suggested, corrected_away(session, workflow_id, step_id), rng)


def message(result: str | None, change: C.CheckChange) -> str:
    what = (
        f"That was a check: {change.param} was set to {change.shown!r}, a value reviewers corrected away "
        f"before (the real suggestion has {change.real!r}). Nothing ran."
    )
    if result == C.MISS:
        return what + " Accepting it counts as a miss. Here is the real suggestion."
    if result == C.CATCH:
        return what + " You caught it. Here is the real suggestion."
    return what + " Skipping it counts neither way. Here is the real suggestion."


def decide(
    uow: UnitOfWork,
    ex,
    step,
    sug: Suggestion,
    kind: str,
    body: dict[str, Any],
    operator: str,
    latency_ms: float,
    now,
    workspace_id: str,
    idempotency_key: str | None,
    open_real: Callable[[], object],
) -> tuple[dict[str, Any], Decision]:
    """A person's decision on a check (services/decisions/coaching.py hands it here once it is valid): counted for the
    operator, audited `check_result`, and the real suggestion opened at once by `open_real` (the caller's
    services.coaching.service.open_suggestion, or for an agent's call services.agents.service.open_after_check: the
    real review of the same call; never a check itself). Nothing runs, nothing else counts."""
    session = uow.session
    audit.lock_workspace(session, workspace_id)
    change = C.CheckChange.from_dict(sug.check_change or {"param": "?"})
    result = C.outcome(kind)
    sug.status, sug.decided_at = "decided", now
    ex.gate = None
    if result is not None:
        metrics.record_decision(
            session, workspace_id, [(CHECK_SCOPE, operator)], ACCEPT if result == C.MISS else REJECT, latency_ms
        )
    check = {"result": result, **change.to_dict(), "message": message(result, change)}
    uow.events.add(
        "suggestion_decided",
        {
            "execution_id": ex.id,
            "suggestion_id": sug.id,
            "step_id": sug.step_id,
            "decision": kind,
            "by": operator,
            "held_until": None,
            "check": check,
        },
        execution=ex.id,
    )
    decision = answers.decision_row(
        ex, sug, kind, body, operator, latency_ms, idempotency_key, now, outcome=C.OUTCOMES[result]
    )
    session.add(decision)
    audit.record(
        session,
        workspace_id,
        operator,
        "check_result",
        target_type="suggestion",
        target_id=sug.id,
        execution_id=ex.id,
        before={"step_id": sug.step_id, "params": sug.params, "check": change.to_dict()},
        after={"decision": kind, "result": result, "feedback": body.get("feedback")},
        result=result or "none",
    )
    executions.set_status(ex, "decide")
    try:  # the real suggestion, at once
        open_real()
    except TemplateFailure as exc:  # its params no longer render: the step fails, as when a gate opens
        text = f"step {step.id!r}: {exc}"
        executions.set_step(ex, step.id, status=S.STEP_FAILED, error=text, finished_at=now)
        ex.error = {"step_id": step.id, "message": text}
        executions.set_status(ex, "fail")
    response = answers.decided(
        uow,
        ex,
        sug,
        decision,
        kind=kind,
        operator=operator,
        latency_ms=latency_ms,
        now=now,
        held_until=None,
        check=check,
    )
    return response, decision
