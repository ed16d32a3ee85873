"""Advancing an execution inside a transaction: take the steps that need no person and no slow tool (skips, gates,
ends, instantaneous tools), judge each call by the policy, open the gate a step stops at, record a tool's outcome,
fail a step with its reason. Functions of the runner (services.orchestration.runner) whose definitions, tools, settings
and spot-check draws they use; the runner runs the slow tools between these transactions."""

from __future__ import annotations

import logging
import time

from sqlalchemy.exc import SQLAlchemyError

from core.execution import states as S
from core.execution.engine import Next, Outcome, call_key, clarification_for, execute, next_action, resolve_params
from core.templating import TemplateFailure
from services.approvals import service as approvals
from services.audit import service as audit
from services.coaching import correction_failures
from services.coaching import service as coaching
from services.executions import gates
from services.executions import service as executions
from services.models.executions import Execution
from services.models.workflows import workflow_of
from services.orchestration import control
from services.orm import utcnow
from services.policies import service as policies
from services.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

SLICE_S = 0.01  # the most one transaction of the runner spends taking steps (see drive)
AGAIN = object()  # drive: the slice is used up, go on in a new transaction
# a step decided by a person before it runs (coaching decisions, approvals): the policy's review is done
REVIEWED = ("accept", "correct", "approve", "edit")


def drive(runner, uow: UnitOfWork, ex: Execution, *, claim: bool):
    """Advance inside the caller's transaction: skips, gates, ends and instantaneous tools (echo, noop).
    Stops before a tool that takes time: with `claim` it marks that step running and returns
    (step, state, params, repeat) for the caller to run outside the transaction (repeat: the step's run was
    started before, its key is kept); without, it returns True
    so the caller schedules the runner. Returns None when nothing is left to run now.

    One transaction takes steps for at most SLICE_S: evaluations of users' templates and conditions are
    bounded one by one (core.budget), and the slice bounds a run of many of them, so that a workflow of
    hundreds of costly conditions cannot hold the server (and SQLite's write lock) meanwhile. Past it,
    the runner goes on in a new transaction (AGAIN, or True without `claim`)."""
    until = time.monotonic() + SLICE_S
    while ex.status in S.RUNNABLE:
        nxt, params = _step(runner, uow, ex, until)
        if nxt.kind == "yield":
            return AGAIN if claim else True
        if nxt.kind != "run":
            return None
        inline = _inline(runner, nxt.subject, ex.workspace_id)
        if not inline and not claim:
            return True
        st = ex.steps[nxt.subject.id]
        repeat = st.idempotency_key is not None  # a run started before (a crash took its instance down)
        if repeat or nxt.subject.type != "action":
            executions.set_step(ex, nxt.subject.id, status=S.STEP_RUNNING, started_at=utcnow())
        else:  # a new run of its tool: a new key
            executions.set_step(
                ex,
                nxt.subject.id,
                status=S.STEP_RUNNING,
                started_at=utcnow(),
                run=st.run + 1,
                idempotency_key=call_key(ex.id, nxt.subject.id, st.run + 1),
            )
        state = executions.to_state(ex)
        if not inline:
            return nxt.subject, state, params, repeat
        record(
            runner,
            uow,
            ex,
            nxt.subject.id,
            execute(
                nxt.subject,
                state,
                runner.tools.for_workspace(ex.workspace_id),
                params=params,
                idempotency_key=st.idempotency_key or "",
            ),
        )
        if time.monotonic() > until and ex.status in S.RUNNABLE:
            return AGAIN if claim else True
    executions.changed(uow, ex)
    return None


def _inline(runner, step, workspace_id: str) -> bool:
    if step.type == "agent":  # LLM requests: always outside the transaction
        return False
    tool = runner.tools.for_workspace(workspace_id).get(step.tool or "") if step.type == "action" else None
    return step.type != "action" or bool(getattr(tool, "inline", False))


def _step(runner, uow: UnitOfWork, ex: Execution, until: float) -> tuple[Next, object]:
    """Take steps that need no tool (skips, gates, ends) until one must run or the execution stops."""
    session = uow.session
    defn = runner.definitions.for_execution(session, ex)
    if ex.status == S.PENDING:
        executions.set_status(ex, "start")
        ex.started_at = utcnow()
    elif ex.status == S.RESUMED:
        executions.set_status(ex, "continue")
    gate = coaching.review_gate(session, ex, runner.settings.spot_check_rate, runner.rng)
    while True:
        try:
            nxt = next_action(defn, executions.to_state(ex), gate)
        except SQLAlchemyError:
            raise
        except Exception as exc:  # a bug or a case nobody foresaw: the execution fails with the reason
            log.exception("choosing the next step of execution %s failed", ex.id)
            nxt = Next("fail", None, f"could not choose the next step: {type(exc).__name__}: {exc}")
        step_id = nxt.step.id if nxt.step else None
        if nxt.kind == "skip":
            executions.set_step(ex, nxt.subject.id, status=S.STEP_SKIPPED, error=nxt.reason, finished_at=utcnow())
            if time.monotonic() > until:
                return Next("yield"), None
            continue
        params = None
        if nxt.kind == "run":
            row = executions.step_state(ex, nxt.subject.id)
            # a suggestion accepted or corrected, or a reviewed tool call approved (or edited): those params
            reviewed = row.decision in REVIEWED
            # a suggestion accepted by its deadline runs with the suggested params, but nobody reviewed it
            params = row.params if reviewed or row.decision == gates.TIMEOUT_ACCEPT else None
            if nxt.subject.type == "action":
                nxt, params = _police(runner, uow, ex, nxt.subject, params, reviewed)
        if nxt.kind == "gate":
            _open_gate(runner, uow, ex, defn, nxt)
        elif nxt.kind == "complete":
            executions.set_status(ex, "complete")
        elif nxt.kind == "fail":
            fail(runner, uow, ex, step_id, nxt.reason)
        if nxt.kind != "run":
            executions.changed(uow, ex, step_id)
        return nxt, params


def _police(runner, uow: UnitOfWork, ex: Execution, step, params, reviewed: bool) -> tuple[Next, object]:
    """The policy on the call the step is about to make, with the params it will really run with (so a
    correction, an edit or a rule changed while the execution waited is judged now). Its verdict is kept
    with the step. `deny` fails the step with the rule's reason; `require_review` opens a tool-call approval
    unless a person already reviewed this very call (a coaching decision or an approval)."""
    session = uow.session
    if params is None:
        try:
            params = resolve_params(step, executions.to_state(ex))
        except TemplateFailure:
            return Next("run", step), None  # execute fails the step, naming the template's field
        if ex.mode != "normal":  # unattended in a coached workflow: it runs what it would have suggested
            params, _, _ = coaching.learned(session, workflow_of(session, ex.workflow_id), step.id, params)
    explained = policies.judge(session, runner.tools.for_workspace(ex.workspace_id), ex, step, params)
    executions.set_step(ex, step.id, policy=explained)
    if explained["effect"] == "deny":
        audit.record(
            session,
            ex.workspace_id,
            "system",
            "policy_deny",
            target_type="step",
            target_id=f"{ex.id}/{step.id}",
            execution_id=ex.id,
            after={"tool": step.tool, "params": params, "policy": explained},
            result="deny",
        )
        return Next("fail", step, f"step {step.id!r}: {policies.denied_message(explained)}"), None
    if explained["effect"] == "require_review" and not reviewed:
        approval = approvals.open_tool_call(uow, ex, step.id, step.tool, params, explained)
        audit.record(
            session,
            ex.workspace_id,
            "system",
            "policy_review",
            target_type="approval",
            target_id=approval.id,
            execution_id=ex.id,
            after={"step_id": step.id, "tool": step.tool, "params": params, "policy": explained},
            result="require_review",
        )
        return Next("gate", step, "policy"), None
    return Next("run", step), params


def _open_gate(runner, uow: UnitOfWork, ex: Execution, defn, nxt: Next) -> None:
    step = nxt.subject
    if nxt.reason == "policy":  # opened by _police
        return
    if nxt.reason == "clarification":  # a pause asked for this step, or its own requires_clarification
        control.hold(uow, ex, step.id, clarification_for(step, executions.to_state(ex)))
        return
    if nxt.reason == "approval":
        try:
            approvals.open_step(uow, ex, defn, step)
        except TemplateFailure as exc:
            fail(runner, uow, ex, step.id, f"step {step.id!r}: {exc}")
        return
    if nxt.reason == "human_input":
        executions.set_step(ex, step.id, status=S.STEP_WAITING)
        ex.gate = {
            "kind": "human_input",
            "step_id": step.id,
            "question": step.question,
            "paused_at": utcnow().isoformat(),
            **gates.armed("human_input", step.human_timeout, utcnow()),
        }
        executions.set_status(ex, "await_clarification")
        uow.events.add(
            "clarification_requested",
            {"execution_id": ex.id, "step_id": step.id, "question": step.question},
            execution=ex.id,
            workspace=ex.workspace_id,
        )
        return
    try:
        purpose = "coaching" if nxt.reason == "decision" else nxt.reason
        # the runner's generator draws a coaching suggestion's check, as it draws the spot checks
        coaching.open_suggestion(
            uow, ex, defn, step, purpose, runner.tools.for_workspace(ex.workspace_id), rng=runner.rng
        )
    except TemplateFailure as exc:
        fail(runner, uow, ex, step.id, f"step {step.id!r}: {exc}")
    except SQLAlchemyError:
        raise
    except Exception as exc:  # never an execution left pending and a 500 for whoever decided before it
        log.exception("opening the gate of step %s of execution %s failed", step.id, ex.id)
        fail(runner, uow, ex, step.id, f"step {step.id!r} could not be prepared: {type(exc).__name__}: {exc}")


def fail(runner, uow: UnitOfWork, ex: Execution, step_id: str | None, message: str) -> None:
    if step_id and executions.step_state(ex, step_id).status not in S.STEP_DONE:
        executions.set_step(ex, step_id, status=S.STEP_FAILED, error=message, finished_at=utcnow())
        # a correction the failure is put down to no longer counts in its pack
        correction_failures.on_step_failed(uow, ex, runner.definitions.for_execution(uow.session, ex), step_id, message)
    ex.error = {"step_id": step_id, "message": message}
    executions.set_status(ex, "fail")


def record(runner, uow: UnitOfWork, ex: Execution, step_id: str, outcome: Outcome) -> None:
    executions.set_step(ex, step_id, attempts=outcome.attempts, params=outcome.params, finished_at=utcnow())
    if ex.status == S.CANCELLED:  # cancelled while the tool ran: keep the cancel, drop the result
        executions.set_step(ex, step_id, status=S.STEP_CANCELLED)
        return
    if outcome.ok:
        executions.set_step(ex, step_id, status=S.STEP_SUCCEEDED, output=outcome.output, error=None)
    else:
        fail(runner, uow, ex, step_id, outcome.error or "failed")
