"""What every coaching decision answers and sends, a check's as a real one's: the decision as the REST answer and the
socket's ack show it (`{"ok", "decision": {...}}`), and its execution's update and session stats, sent once the
transaction commits (docs/api.md "Coaching")."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from services.executions import service as executions
from services.models.coaching import Decision, Suggestion
from services.models.executions import Execution
from services.notifier import jsonable
from services.unit_of_work import UnitOfWork


def decision_row(
    ex: Execution,
    sug: Suggestion,
    kind: str,
    body: dict[str, Any],
    operator: str,
    latency_ms: float,
    idempotency_key: str | None,
    now: datetime,
    **extra: Any,
) -> Decision:
    """The decision's row, a check's as a real one's (`extra`: a check's `outcome`)."""
    return Decision(
        suggestion_id=sug.id,
        workspace_id=ex.workspace_id,
        execution_id=ex.id,
        workflow_id=ex.workflow_id,
        step_id=sug.step_id,
        decision=kind,
        correction=body.get("correction") if kind == "correct" else None,
        manual_output=body.get("manual_output") if kind == "manual" else None,
        feedback=body.get("feedback"),
        operator=operator,
        latency_ms=latency_ms,
        idempotency_key=idempotency_key,
        created_at=now,
        **extra,
    )


def decided(
    uow: UnitOfWork,
    ex: Execution,
    sug: Suggestion,
    decision: Decision,
    *,
    kind: str,
    operator: str,
    latency_ms: float,
    now: datetime,
    held_until: str | None,
    **extra: Any,
) -> dict[str, Any]:
    """The answer's start (`extra` before the decision: a check's `check`; `held_until` as the answer writes it), with
    the execution's update and the session's stats noted in `uow.events`."""
    response = {
        "ok": True,
        **extra,
        "decision": jsonable(
            {
                "decision_id": decision.id,
                "suggestion_id": sug.id,
                "decision": kind,
                "operator": operator,
                "latency_ms": round(latency_ms, 1),
                "created_at": now,
                "held_until": held_until,
            }
        ),
    }
    executions.changed(uow, ex, sug.step_id)
    uow.events.latest("coaching_stats", {"execution_id": ex.id, **executions.stats_of(ex)}, execution=ex.id, plain=True)
    return response
