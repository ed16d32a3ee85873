"""Interactive control of executions and plans alike (a plan id is an execution id): pause before a step for
clarification, correct a step that has not run, resume with feedback, read where it stands, cancel, answer a
human_input step. The rules are
core/execution/control.py; each function runs in the caller's transaction and adds the events to push after it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import BadRequest, Conflict, NotFound, ValidationFailed
from core.execution import control as C
from core.execution import states as S
from core.tools import ToolRegistry
from core.workflow import parse_definition
from services.agents import replies as agent_replies
from services.audit import service as audit
from services.coaching import corrections
from services.coaching import service as coaching
from services.decisions import deadlines as approval_deadlines
from services.executions import service as executions
from services.models.coaching import Suggestion
from services.models.executions import Execution
from services.models.plans import Plan
from services.orm import utcnow
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache


def load(session: Session, workspace_id: str, execution_id: str, *, plan: bool = False) -> Execution:
    """The execution, row-locked; with `plan`, only if it is a plan (the /api/plans routes)."""
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    if plan and session.get(Plan, ex.id) is None:
        raise NotFound(f"plan {execution_id} not found")
    return ex


def _known_step(defn, step_id: str) -> None:
    if step_id not in defn.step_ids:
        raise ValidationFailed(
            f"there is no step {step_id!r}", details={"step_id": [f"unknown step; one of {defn.step_ids}"]}
        )


def hold(uow: UnitOfWork, ex: Execution, step_id: str, question: str | None, suspended: dict | None = None) -> None:
    """Stop before `step_id` in waiting_clarification and push clarification_requested. `suspended`: the gate the
    step was waiting at (a coaching decision), given back at the resume unless the step is corrected meanwhile."""
    executions.set_step(ex, step_id, status=S.STEP_WAITING)
    executions.set_status(ex, "await_clarification")
    ex.gate = {
        "kind": "clarification",
        "step_id": step_id,
        "question": question,
        "paused_at": utcnow().isoformat(),
        "suspended": suspended,
    }
    uow.events.add(
        "clarification_requested",
        {"execution_id": ex.id, "step_id": step_id, "question": question},
        execution=ex.id,
        workspace=ex.workspace_id,
    )


def pause(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    question: str | None,
    actor: str,
    *,
    plan: bool = False,
) -> Execution:
    """The execution stops before `step_id` in waiting_clarification: at once when that step is the one it is
    waiting at (a coaching suggestion), else when it gets there (a breakpoint; a plan not executed yet included)."""
    session = uow.session
    ex = load(session, workspace_id, execution_id, plan=plan)
    defn = definitions.for_execution(session, ex)
    _known_step(defn, step_id)
    st = executions.step_state(ex, step_id)
    C.check_pausable(ex.status, st.status, step_id)
    question = question or f"Paused before step {defn.step(step_id).name!r}."
    gate = ex.gate or {}
    at_once = gate.get("step_id") == step_id
    if at_once and gate.get("kind") == "held":  # a decision held for its undo window (services.coaching.held)
        raise Conflict(
            "a decision on this step is held for its undo window: take it back (undo) first",
            details={"status": ex.status, "held_until": gate.get("deadline")},
        )
    if at_once:  # the table says whether it may stop now (not while answering a question or an approval)
        S.transition(ex.status, "await_clarification")
        hold(uow, ex, step_id, question, suspended=gate)
    else:
        control = dict(ex.control or {})
        control["breakpoints"] = {**(control.get("breakpoints") or {}), step_id: question}
        ex.control = control
    audit.record(
        session,
        workspace_id,
        actor,
        "pause",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        after={"step_id": step_id, "question": question, "at_once": at_once},
        result="clarification",
    )
    executions.changed(uow, ex, step_id)
    return ex


def apply_correction(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    correction: Any,
    actor: str,
    *,
    plan: bool = False,
) -> Execution:
    """Change a step that has not run yet, for this execution only, validated like a definition (422 naming
    `correction.updated_step.<field>`), audited with before/after and counted in the step's correction pack. A
    step paused for clarification leaves the execution in waiting_correction until resumed; an approved plan
    goes back to draft (what was approved changed)."""
    session = uow.session
    ex = load(session, workspace_id, execution_id, plan=plan)
    defn = definitions.for_execution(session, ex)
    _known_step(defn, step_id)
    if not isinstance(correction, dict) or "updated_step" not in correction:
        raise ValidationFailed(
            "the correction names the step's new fields",
            details={"correction.updated_step": ["is required: an object"]},
        )
    st = executions.step_state(ex, step_id)
    C.check_correctable(ex.status, st.status, step_id, ex.gate)
    before, after, index = C.corrected_step(defn, step_id, correction["updated_step"])
    overrides = {**((ex.control or {}).get("overrides") or {}), step_id: after}
    C.parse_with(lambda source: parse_definition(source, tools), C.with_overrides(defn.source, {step_id: after}), index)
    ex.control = {**(ex.control or {}), "overrides": overrides}
    if st.decision is not None:  # a decision about the old step does not hold for the new one
        executions.set_step(ex, step_id, decision=None, params=None)
    if C.paused_at(ex.gate, step_id):
        if ex.status == S.WAITING_CLARIFICATION:
            executions.set_status(ex, "await_correction")
        ex.gate = {**ex.gate, "corrected": True}
    elif ex.status == S.APPROVED:
        executions.set_status(ex, "revise")
    audit.record(
        session,
        workspace_id,
        actor,
        "step_correction",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before=before,
        after=after,
        result=ex.status,
    )
    corrections.record(
        uow,
        workspace_id,
        ex.workflow_id,
        step_id,
        before.get("params") or {},
        after.get("params") or {},
        actor=actor,
    )
    executions.changed(uow, ex, step_id)
    return ex


def resume(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    execution_id: str,
    feedback: Any,
    actor: str,
    *,
    plan: bool = False,
) -> tuple[Execution, bool]:
    """Carry on after a clarification pause; the feedback is kept with the step (`{{ feedback.<step_id> }}`).
    Returns (execution, whether the runner must go on)."""
    session = uow.session
    ex = load(session, workspace_id, execution_id, plan=plan)
    refusal = C.resume_refusal(ex.status, ex.gate)
    if refusal is not None:
        raise refusal
    gate = ex.gate or {}  # (no refusal: it waits at a clarification gate)
    step_id = gate["step_id"]
    ex.control = C.after_resume(ex.control, gate, feedback, utcnow().isoformat())
    executions.set_status(ex, "resume")
    suspended = gate.get("suspended") or None
    waiting = [s for s in coaching.pending(session, ex.id) if s.step_id == step_id] if suspended else []
    run = True
    if waiting and not gate.get("corrected"):
        # it was waiting for a coaching decision: it waits for it again, and every panel is shown it again
        ex.gate = suspended
        executions.set_status(ex, "await_decision")
        for sug in waiting:
            uow.events.add(
                "coaching_suggestion",
                coaching.described(session, definitions, tools, sug),
                execution=ex.id,
                workspace=ex.workspace_id,
            )
        run = False
    elif gate.get("agent"):  # an agent step's CONFIRM_DATA: the feedback is the answer, its next message
        agent_replies.answer(uow, ex, step_id, feedback, actor)
    else:
        for sug in waiting:  # a suggestion for the step as it was: the runner suggests the corrected one
            sug.status = "superseded"
        executions.set_step(ex, step_id, status=S.STEP_PENDING)
        ex.gate = None
    audit.record(
        session,
        workspace_id,
        actor,
        "resume",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before={"question": gate.get("question")},
        after={"step_id": step_id, "feedback": feedback},
        result="clarification",
    )
    executions.changed(uow, ex, step_id)
    return ex, run


def state(ex: Execution) -> dict[str, Any]:
    return {"execution_id": ex.id, **C.state_view(ex.status, ex.gate, ex.control)}


def cancel(uow: UnitOfWork, workspace_id: str, execution_id: str, actor: str = "system") -> Execution:
    """Cancel; its pending suggestions are superseded and its pending approvals expire (approval_decided is
    added to `uow.events`, so every queue drops them), in this transaction."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    if ex.status in S.TERMINAL:
        raise BadRequest(f"execution is already {ex.status}", details={"status": ex.status})
    before = ex.status
    executions.set_status(ex, "cancel")
    audit.record(
        session,
        workspace_id,
        actor,
        "cancel",
        target_type="execution",
        target_id=ex.id,
        execution_id=ex.id,
        before={"status": before},
        after={"status": ex.status},
    )
    for st in ex.steps.values():
        if st.status not in S.STEP_DONE:
            executions.set_step(ex, st.step_id, status=S.STEP_CANCELLED)
    ex.gate = None
    for sug in session.scalars(
        select(Suggestion).where(
            Suggestion.execution_id == ex.id,  # held: never released
            Suggestion.status.in_(("pending", "held")),
        )
    ):
        sug.status = "superseded"
    approval_deadlines.expire_for_execution(uow, ex, actor, "the execution was cancelled")
    executions.changed(uow, ex)
    return ex


def answer(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    answer_value: Any,
    actor: str = "system",
) -> Execution:
    """The answer to a human_input step becomes its output (to an agent step's CONFIRM_DATA: its next message);
    the execution goes on."""
    session = uow.session
    ex = executions.get(session, workspace_id, execution_id, for_update=True)
    gate = ex.gate or {}
    S.transition(ex.status, "answer")  # raises the table's Conflict when nothing is waiting
    asks = "clarification" if gate.get("agent") else "human_input"  # an agent step's CONFIRM_DATA, or the step's
    if gate.get("kind") != asks or gate.get("step_id") != step_id:
        raise Conflict(f"step {step_id!r} is not waiting for input", details={"waiting_step": gate.get("step_id")})
    # who answered what: the run's history shows it beside the question (services/orchestration/history.py)
    audit.record(
        session,
        workspace_id,
        actor,
        "answer",
        target_type="step",
        target_id=f"{ex.id}/{step_id}",
        execution_id=ex.id,
        before={"question": gate.get("question")},
        after={"step_id": step_id, "answer": answer_value},
        result=asks,
    )
    if gate.get("agent"):
        agent_replies.answer(uow, ex, step_id, answer_value, actor)
        executions.set_status(ex, "answer")
        return ex
    executions.settle_answer(ex, step_id, answer_value)
    return ex
