"""Releasing and taking back held decisions (core/coaching/undo.py has the rules, services/coaching/held.py holds).

- **Release**: when the undo window ends, the runner's deadline scanner (services.orchestration.scans.fire_due) calls
  `fire`; a held gate's decision then acts exactly as it would have at once (services.decisions.coaching.act), and
  only then is it counted in the session's stats and the metrics, so a decision taken back never counts.
- **Undo** (`POST /api/executions/<id>/coaching/undo {suggestion_id}`, the socket's `coaching_undo`): under the
  execution's lock, so an undo and the release cannot both win. The decision row is deleted, the suggestion is
  pending again as it was (its gate, its deadline), `decision_undo` is audited, and the suggestion is pushed again,
  so that every open panel and queue shows it. Once released, or for a decision that was not held, 409.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.coaching import decisions as D
from core.coaching import undo as U
from core.errors import Conflict, NotFound
from core.tools import ToolRegistry
from services.audit import service as audit
from services.coaching import counting, held
from services.coaching import service as coaching
from services.decisions import approval_undo
from services.decisions import coaching as decisions
from services.executions import gates
from services.executions import service as executions
from services.models.coaching import Decision, Suggestion
from services.models.executions import Execution
from services.models.workflows import workflow_of
from services.notifier import jsonable
from services.orm import utcnow
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache

SYSTEM = "system"


def fire(uow: UnitOfWork, definitions: DefinitionCache, tools_of, execution_id: str, now: datetime) -> Execution | None:
    """The deadline scanner's one entry for an execution's gate: a held decision (on a suggestion, or an approval's)
    whose window ended is released,
    any other gate's deadline fires as services.executions.gates says. `tools_of(workspace_id)`: its tools."""
    session = uow.session
    ex = executions.get_any(session, execution_id, for_update=True)
    if ex is None or ex.gate_due_at is None or ex.gate_due_at > now:
        return None
    if not held.is_held(ex):
        return gates.fire(uow, definitions, execution_id, now)
    if (ex.gate or {}).get("approval_id"):  # an approval's decision (services.approvals.held)
        approval_undo.release(uow, ex, now)
    else:
        release(uow, definitions, tools_of(ex.workspace_id), ex, now)
    return ex


def release(uow: UnitOfWork, definitions: DefinitionCache, tools: ToolRegistry, ex: Execution, now: datetime) -> None:
    """The held decision acts: its step runs (accept, correct), or is skipped, done by hand or rejected."""
    session = uow.session
    gate = ex.gate or {}
    sug = session.get(Suggestion, gate.get("suggestion_id"), populate_existing=True)
    decision = session.get(Decision, sug.id) if sug is not None else None
    if sug is None or decision is None or sug.status != U.HELD:
        ex.gate = gate.get("reopen")  # nothing is held any more (cannot happen under the lock): wait as before
        return
    kind = decision.decision
    defn = definitions.for_execution(session, ex)
    step = defn.step(sug.step_id)
    wf = workflow_of(session, ex.workflow_id)
    sug.status, sug.decided_at = "decided", now
    ex.gate = None
    body = {
        "decision": kind,
        "correction": decision.correction,
        "manual_output": decision.manual_output,
        "feedback": decision.feedback,
    }
    decisions.act(
        uow,
        ex,
        defn,
        step,
        sug,
        kind,
        body,
        decision.operator,
        now,
        tools,
        ex.workspace_id,
        sug.purpose == "correction",
    )
    executions.count_stat(ex, D.STAT_OF[kind])
    decision.evidence = counting.count_person(uow, defn, ex, wf, sug, kind, decision.latency_ms, decision.operator)
    audit.record(
        session,
        ex.workspace_id,
        SYSTEM,
        "decision_release",
        target_type="suggestion",
        target_id=sug.id,
        execution_id=ex.id,
        before={"decision": kind, "operator": decision.operator, "held_until": gate.get("deadline")},
        after={"status": ex.status},
        result=kind,
    )
    uow.events.add(
        "decision_released",
        {"execution_id": ex.id, "suggestion_id": sug.id, "step_id": sug.step_id, "decision": kind},
        execution=ex.id,
        workspace=ex.workspace_id,
    )
    executions.changed(uow, ex, sug.step_id)
    uow.events.latest("coaching_stats", {"execution_id": ex.id, **executions.stats_of(ex)}, execution=ex.id, plain=True)


def undo(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    execution_id: str,
    suggestion_id: str,
    actor: str,
) -> tuple[Execution, Suggestion]:
    """Take back the held decision on `suggestion_id`: the suggestion is pending again. 409 when there is none to
    take back (not decided, or released: its step may have started)."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    sug = session.get(Suggestion, suggestion_id, populate_existing=True)
    if sug is None or sug.execution_id != ex.id:
        raise NotFound(f"suggestion {suggestion_id} not found in execution {execution_id}")
    gate = ex.gate or {}
    why = U.refusal(sug.status, held.is_held(ex) and gate.get("suggestion_id") == sug.id)
    if why is not None:
        raise Conflict(
            why,
            code="step_started" if sug.status == "decided" else "nothing_to_undo",
            details={"suggestion_status": sug.status, "execution_status": ex.status},
        )
    decision = session.get(Decision, sug.id)
    if decision is not None:
        session.delete(decision)
    now = utcnow()
    sug.status, sug.decided_at = "pending", None
    ex.gate = gate.get("reopen")
    reopened_deadline = (ex.gate or {}).get("deadline")
    if reopened_deadline and datetime.fromisoformat(reopened_deadline) <= now:
        gates.rearm(ex, [sug], now)  # its deadline passed while held: the person gets the gate's whole time again
    audit.record(
        session,
        workspace_id,
        actor,
        "decision_undo",
        target_type="suggestion",
        target_id=sug.id,
        execution_id=ex.id,
        before={"decision": gate.get("decision"), "operator": gate.get("operator"), "held_until": gate.get("deadline")},
        after={"status": "pending", "step_id": sug.step_id},
        result="undone",
    )
    uow.events.add(
        "decision_undone",
        {
            "execution_id": ex.id,
            "suggestion_id": sug.id,
            "step_id": sug.step_id,
            "decision": gate.get("decision"),
            "by": actor,
        },
        execution=ex.id,
        workspace=ex.workspace_id,
    )
    uow.events.add(
        "coaching_suggestion",
        coaching.described(session, definitions, tools, sug),
        execution=ex.id,
        workspace=ex.workspace_id,
    )
    executions.changed(uow, ex, sug.step_id)
    return ex, sug


def submit(services, workspace_id: str, execution_id: str, suggestion_id: str, actor: str) -> dict[str, Any]:
    """The one way in for an undo, from REST or the socket: take back, commit, push (one unit of work). The answer:
    the suggestion, pending again, and where the execution stands."""
    tools = services.tools.for_workspace(workspace_id)
    with services.command() as uow:
        ex, sug = undo(uow, services.definitions, tools, workspace_id, execution_id, suggestion_id, actor)
        update = executions.update_event(ex, sug.step_id, steps=False)
        update["gate"] = ex.gate
        answer = {
            "ok": True,
            "suggestion": coaching.described(uow.session, services.definitions, tools, sug),
            "execution": jsonable(update),
        }
    return answer
