"""Deadlines on human gates, around core/gates (the rules live there): arming a gate's deadline when it opens,
holding it while its session is paused, and firing it when nobody acted in time.

Deadlines are rows, not timers: a gate with a deadline writes it into the execution's `gate` (shown to clients),
which sets the indexed `executions.gate_due_at` (services.models._gate_due); the runner's deadline scanner
(services.orchestration.runner.Runner.fire_due, every COACH_APPROVAL_SCAN_S seconds and at start-up) fires the due ones,
each in its own transaction under the execution's lock, only if the execution still waits at that gate. A person's
decision, answer or cancel takes the same lock first, so whoever commits first wins: the other finds the gate gone
(a person then gets 409, a timeout does nothing), and a restart or a second process never fires one twice.

A timeout acts as user `system` and is audited (`gate_timeout`); it is no operator's decision, so no acceptance
metric counts it (the session's stats count it as `timed_out`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import gates as G
from core.execution import states as S
from core.gates import TIMEOUT_ACCEPT, HumanTimeout  # noqa: F401  (TIMEOUT_ACCEPT: the runner reads it here)
from services.audit import service as audit
from services.executions import service as executions
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache

TIMED_OUT = "timed_out"  # a suggestion's status once its deadline fired


def armed(kind: str, timeout: HumanTimeout | None, opened: datetime) -> dict[str, Any]:
    """The fields a gate of `kind` opened at `opened` with `timeout` adds to `ex.gate`: {deadline, on_timeout,
    timeout_s} (none without a timeout)."""
    deadline = G.deadline(opened, timeout)
    if timeout is None or deadline is None:
        return {}
    return {
        "deadline": deadline.isoformat(),
        "on_timeout": G.action_for(kind, timeout.on_timeout),
        "timeout_s": timeout.timeout_s,
    }


def on_timeout(purpose: str, timeout: HumanTimeout | None) -> str | None:
    """What a suggestion's deadline does (its view's `on_timeout`), None without a deadline."""
    return (
        G.action_for(G.CORRECTION if purpose == "correction" else G.SUGGESTION, timeout.on_timeout)
        if timeout is not None
        else None
    )


# -- pause and resume: a paused session's clock stops ---------------------------------------------------------------


def hold(ex: Execution, waiting: list[Suggestion]) -> None:
    """The session is paused: its gate's deadline is taken off (the scanner no longer sees it)."""
    gate = ex.gate or {}
    if gate.get("deadline"):
        ex.gate = {**gate, "deadline": None}
    for sug in waiting:
        sug.deadline = None


def rearm(ex: Execution, waiting: list[Suggestion], now: datetime) -> None:
    """The session is resumed: its gate gets its whole time again, from now."""
    gate = ex.gate or {}
    timeout_s = gate.get("timeout_s")
    if not timeout_s:
        return
    deadline = now + timedelta(seconds=timeout_s)
    ex.gate = {**gate, "deadline": deadline.isoformat()}
    for sug in waiting:
        sug.deadline = deadline


# -- firing ---------------------------------------------------------------------------------------------------------


def due(session: Session, now: datetime, limit: int = 100) -> list[str]:
    """Ids of executions whose gate's deadline has passed, oldest first (index ix_executions_gate_due)."""
    return list(
        session.scalars(
            select(Execution.id).where(Execution.gate_due_at <= now).order_by(Execution.gate_due_at).limit(limit)
        )
    )


def fire(uow: UnitOfWork, definitions: DefinitionCache, execution_id: str, now: datetime) -> Execution | None:
    """Fire the deadline of the gate the execution waits at, once: under its lock, only if it still waits there and
    the deadline passed. Returns the execution when it fired."""
    session = uow.session
    ex = executions.get_any(session, execution_id, for_update=True)
    if ex is None or ex.gate_due_at is None or ex.gate_due_at > now:
        return None  # gone, or moved on (and maybe on to a new gate) since the scan read it
    gate = ex.gate or {}
    kind, step_id = gate.get("kind"), gate.get("step_id")
    sug = (
        session.get(Suggestion, gate.get("suggestion_id"), populate_existing=True)
        if kind in (G.SUGGESTION, G.CORRECTION)
        else None
    )
    if (
        not G.is_due(ex.status, kind, ex.gate_due_at, now)
        or (sug is not None and sug.status != "pending")
        or (sug is None and kind != G.CLARIFICATION)
        or not isinstance(kind, str)  # (a gate with a deadline names its kind and step)
        or not isinstance(step_id, str)
    ):
        # no longer waiting at that gate, by a path that kept its deadline: the scanner must not find it again
        ex.gate_due_at = None
        return None
    action, timeout_s = gate.get("on_timeout", G.FAIL), float(gate.get("timeout_s") or 0)
    text = G.message(kind, action, timeout_s)
    decision = f"timeout_{action}"
    ex.gate = None
    if sug is not None:
        sug.status, sug.decided_at = TIMED_OUT, now
        executions.count_stat(ex, "timed_out")
    if action == G.FAIL:
        executions.set_step(ex, step_id, status=S.STEP_FAILED, decision=decision, error=text, finished_at=now)
        ex.error = {"step_id": step_id, "message": text}
        executions.set_status(ex, "fail")
    elif action == G.SKIP:
        executions.set_step(ex, step_id, status=S.STEP_SKIPPED, decision=decision, error=text, finished_at=now)
        executions.set_status(ex, {G.SUGGESTION: "decide", G.CORRECTION: "correct", G.CLARIFICATION: "answer"}[kind])
    elif action == G.ACCEPT:  # runs with the suggested params; the policy judges the call when it is about to run
        # (a check's are never run: the step's own, rendered again when it runs, are what it would have suggested)
        executions.set_step(
            ex,
            step_id,
            status=S.STEP_PENDING,
            decision=decision,
            params=None if sug is None or sug.purpose == "check" else sug.params,
        )
        executions.set_status(ex, "decide")
    else:  # answer: as if answered with the step's timeout_answer
        step = definitions.get(session, ex.workflow_id, ex.workflow_version).step(step_id)
        executions.settle_answer(ex, step_id, step.human_timeout.answer if step.human_timeout else None, decision)
    audit.record(
        session,
        ex.workspace_id,
        G.SYSTEM,
        "gate_timeout",
        target_type="suggestion" if sug else "step",
        target_id=sug.id if sug else f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before={"kind": kind, "step_id": step_id, "deadline": gate.get("deadline")},
        after={"action": action, "status": ex.status, "message": text},
        result=action,
    )
    payload = {
        "execution_id": ex.id,
        "step_id": step_id,
        "kind": kind,
        "action": action,
        "suggestion_id": sug.id if sug else None,
        "message": text,
    }
    uow.events.add("gate_timed_out", payload, execution=ex.id, workspace=ex.workspace_id)
    executions.changed(uow, ex, step_id)
    if sug is not None:
        uow.events.latest("coaching_stats", {"execution_id": ex.id, **executions.stats_of(ex)}, execution=ex.id)
    return ex
