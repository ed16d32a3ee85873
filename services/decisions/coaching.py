"""Applying a decision (docs/design.md#decisions) in one transaction: the suggestion, the step, the execution,
the correction pack, the session stats and every metric scope change together or not at all."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.coaching import checks as C
from core.coaching import decisions as D
from core.coaching.counters import DECISIONS
from core.coaching.soundness import correction_problems, name_missing_fields
from core.errors import Conflict, NotFound, ValidationFailed
from core.execution import states as S
from core.tools import ToolRegistry, schema_errors
from core.workflow import WorkflowDef
from services.agents import replies as agent_replies
from services.agents import service as agent
from services.audit import service as audit
from services.coaching import answers, checks, corrections, counting, held
from services.coaching import service as coaching
from services.executions import service as executions
from services.models.coaching import Decision, Suggestion
from services.models.executions import Execution
from services.models.workflows import workflow_of
from services.notifications import outbox as notification_outbox
from services.notifier import jsonable
from services.orm import utcnow
from services.policies import service as policies
from services.unit_of_work import UnitOfWork
from services.workflows.service import DefinitionCache

AFTER_REJECT = D.AFTER_REJECT


class Replayed(Exception):
    """A request with an Idempotency-Key that was already answered: its first answer, unchanged."""

    def __init__(self, response: dict):
        super().__init__("replayed")
        self.response = response


def replay(
    session: Session, workspace_id: str, idempotency_key: str | None, suggestion_id: str, execution_id: str
) -> dict | None:
    """The first answer to a request with this Idempotency-Key, if there was one."""
    if not idempotency_key:
        return None
    found = session.execute(
        select(Decision.suggestion_id, Decision.execution_id, Decision.response).where(
            Decision.workspace_id == workspace_id, Decision.idempotency_key == idempotency_key
        )
    ).first()
    if found is None:
        return None
    done_suggestion, done_execution, response = found
    if done_suggestion != suggestion_id or done_execution != execution_id:
        raise Conflict(
            "this Idempotency-Key was used for another suggestion",
            details={"idempotency_key": idempotency_key, "suggestion_id": done_suggestion},
        )
    return response


def _validate(body: dict[str, Any], sug: Suggestion, tools: ToolRegistry) -> None:
    kind = body.get("decision")
    if kind not in DECISIONS:
        raise ValidationFailed("unknown decision", details={"decision": [f"must be one of {list(DECISIONS)}"]})
    if kind == "correct":
        correction = body.get("correction")
        if not isinstance(correction, dict):
            raise ValidationFailed(
                "a correction needs the corrected params", details={"correction": ["is required: an object of params"]}
            )
        tool = tools.get(sug.tool or "")
        problems = name_missing_fields(schema_errors(tool.params_schema, correction)) if tool else {}
        if problems:
            raise ValidationFailed(
                f"the correction does not fit tool {sug.tool!r}",
                details={f"correction.{k}" if k != "(params)" else "correction": v for k, v in problems.items()},
            )


def _check_sound(sug: Suggestion, step, correction: dict[str, Any], tools: ToolRegistry) -> None:
    """What the tool's schema cannot say (core.coaching.soundness): a param the step sets is not dropped, a param
    keeps its type. 422 naming each field, from REST and from the socket alike (both come through `decide`)."""
    tool = tools.get(sug.tool or "")
    problems = correction_problems(
        sug.params,
        correction,
        tool.params_schema if tool else None,
        defined=step.params if isinstance(step.params, dict) else None,
    )
    if problems:
        raise ValidationFailed(
            f"the correction breaks step {sug.step_id!r}: "
            + "; ".join(f"{k} {', '.join(v)}" for k, v in problems.items()),
            details={f"correction.{k}": v for k, v in problems.items()},
        )


def decide(
    uow: UnitOfWork,
    definitions: DefinitionCache,
    tools: ToolRegistry,
    workspace_id: str,
    execution_id: str,
    body: dict[str, Any],
    operator: str,
    idempotency_key: str | None = None,
    undo_window_s: float = 0.0,
) -> tuple[dict[str, Any], Decision]:
    """Apply the decision in `body` to the execution's suggestion; returns the start of the answer and the decision,
    added to the session (`answer` completes both once the transaction has gone on). A decision on a risky call is
    held for the undo window instead (services/coaching/held.py): stored, not acted on or counted until released."""
    session = uow.session
    suggestion_id = str(body.get("suggestion_id") or "")
    if not suggestion_id:
        raise ValidationFailed("suggestion_id is required", details={"suggestion_id": ["is required"]})
    loaded = executions.get_with_suggestion(session, workspace_id, execution_id, suggestion_id)
    if loaded is None:  # something is missing: say what
        ex = executions.get(session, workspace_id, execution_id, for_update=True)
        sug = session.get(Suggestion, suggestion_id)
        wf = workflow_of(session, ex.workflow_id)
    else:
        ex, sug, wf = loaded
    # under the execution's lock: a concurrent retry with the same key may have committed while we waited for it
    earlier = replay(session, workspace_id, idempotency_key, suggestion_id, execution_id)
    if earlier is not None:
        raise Replayed(earlier)
    if sug is None or sug.execution_id != ex.id:
        raise NotFound(f"suggestion {suggestion_id} not found in execution {execution_id}")
    if sug.status != "pending":
        raise Conflict(f"suggestion is already {sug.status}", details={"suggestion_status": sug.status})
    if ex.status == S.PAUSED:
        raise Conflict("the coaching session is paused; resume it first", details={"status": ex.status})
    _validate(body, sug, tools)
    kind = body["decision"]
    correcting = sug.purpose == "correction"
    if sug.kind == "tool_call" and ex.status != S.WAITING_DECISION:
        raise Conflict(
            f"the agent is not waiting for this call (execution is {ex.status})", details={"status": ex.status}
        )
    if correcting and kind not in AFTER_REJECT:
        raise Conflict(
            f"after a rejection the step takes {list(AFTER_REJECT)}, or cancel the execution",
            details={"status": ex.status, "allowed": list(AFTER_REJECT)},
        )
    S.transition(ex.status, "correct" if correcting else "decide")  # the table says whether we may

    now = utcnow()
    latency_ms = max(0.0, (now - sug.created_at).total_seconds() * 1000.0)
    defn = definitions.for_execution(session, ex)
    step = defn.step(sug.step_id)
    if kind == "correct" and sug.kind != "tool_call":
        _check_sound(sug, step, body["correction"], tools)
    if sug.purpose == C.PURPOSE:  # a check never runs: no policy, no hold, counted for its operator only
        return checks.decide(
            uow,
            ex,
            step,
            sug,
            kind,
            body,
            operator,
            latency_ms,
            now,
            workspace_id,
            idempotency_key,
            # the real suggestion (never a check itself: no generator is given); an agent's: the same call's review
            (lambda: agent.open_after_check(uow, ex, step, sug, tools))
            if sug.kind == "tool_call"
            else (lambda: coaching.open_suggestion(uow, ex, defn, step, "coaching", tools)),
        )
    if kind in ("accept", "correct"):
        # the call that would run is judged now, under the rules of now: a denied call is never run
        params = sug.params if kind == "accept" else body["correction"]
        known = sug.policy if kind == "accept" else None
        if sug.kind == "tool_call":  # an agent's call: judged as one (step_type agent, agent_step)
            verdict = agent.judge_call(session, tools, ex, step, sug.tool, params, known=known)
        else:
            verdict = policies.judge(session, tools, ex, step, params, known=known)
        if verdict["effect"] == "deny":
            raise Conflict(
                f"this call is {policies.denied_message(verdict)}",
                code="policy_denied",
                details={"policy": verdict, "decision": kind},
            )
    # the workspace's lock before the first write (PostgreSQL): the pack, metric and audit rows this decision
    # changes are all locked under it, in one order for every transaction (services.audit.service.lock_workspace)
    audit.lock_workspace(session, workspace_id)
    window_s = held.window(session, tools, sug, workspace_id, undo_window_s)
    # held: acts when the deadline scanner releases it (services.decisions.undo.release), unless taken back before
    held_until = held.hold(ex, sug, kind, operator, now, window_s) if window_s > 0 else None
    # every panel on this run is told who decided what, before the next suggestion replaces this one
    uow.events.add(
        "suggestion_decided",
        {
            "execution_id": ex.id,
            "suggestion_id": sug.id,
            "step_id": sug.step_id,
            "decision": kind,
            "by": operator,
            "held_until": held_until,
        },
        execution=ex.id,
    )
    if held_until is None:
        sug.status, sug.decided_at = "decided", now
        ex.gate = None
        act(uow, ex, defn, step, sug, kind, body, operator, now, tools, workspace_id, correcting)

    decision = answers.decision_row(ex, sug, kind, body, operator, latency_ms, idempotency_key, now)
    session.add(decision)
    audit.record(
        session,
        workspace_id,
        operator,
        "correction" if kind == "correct" else "decision",
        target_type="suggestion",
        target_id=sug.id,
        execution_id=ex.id,
        before={
            "step_id": sug.step_id,
            "params": sug.params,
            "policy": {"effect": sug.policy.get("effect"), "rule": sug.policy.get("rule")} if sug.policy else None,
        },
        after={
            "decision": kind,
            "correction": body.get("correction") if kind == "correct" else None,
            "feedback": body.get("feedback"),
            **({"held_until": held_until} if held_until else {}),
        },
        result=kind,
    )
    if held_until is None:  # a held decision is counted when it is released: one taken back never counts
        executions.count_stat(ex, D.STAT_OF[kind])
        decision.evidence = counting.count_person(uow, defn, ex, wf, sug, kind, latency_ms, operator)
    # the answer's start: `answer` adds where the execution then stands, once the transaction has gone on (or not)
    response = answers.decided(
        uow,
        ex,
        sug,
        decision,
        kind=kind,
        operator=operator,
        latency_ms=latency_ms,
        now=now,
        held_until=held_until,
    )
    return response, decision


def act(
    uow: UnitOfWork,
    ex: Execution,
    defn: WorkflowDef,
    step,
    sug: Suggestion,
    kind: str,
    body: dict[str, Any],
    operator: str,
    now,
    tools: ToolRegistry,
    workspace_id: str,
    correcting: bool,
) -> None:
    """What the decision does, at once or when its hold is released (services.decisions.undo.release)."""
    if sug.kind == "tool_call":  # the call gets its one answer, or runs when the runner takes the step again
        call_effect = D.for_tool_call(
            kind,
            suggested=sug.params,
            correction=body.get("correction"),
            manual_output=body.get("manual_output"),
            feedback=body.get("feedback"),
            operator=operator,
        )
        agent_replies.settle_call(uow, ex, sug, call_effect, kind, operator)
        executions.set_status(ex, "decide")
        return
    effect = D.for_step(
        kind,
        suggested=sug.params,
        correction=body.get("correction"),
        manual_output=body.get("manual_output"),
        feedback=body.get("feedback"),
        operator=operator,
        on_reject=step.on_reject,
        correcting=correcting,
    )
    _apply(
        uow,
        ex,
        defn,
        step,
        sug,
        kind,
        effect,
        operator,
        now,
        tools,
        workspace_id,
        body.get("feedback") or "rejected",
    )


def answer(
    response: dict[str, Any], decision: Decision, ex: Execution, step_id: str | None, idempotency_key: str | None
) -> dict[str, Any]:
    """The decision's answer, made once its transaction is done with the execution: where the execution is and the
    session's counters (the steps' states go to the rooms, with the event, not into it). `step_id`: the decided
    step, when the execution stopped there (it did not go on to a next gate). The answer is kept with the decision
    for a replay of the same Idempotency-Key, the only way it is read again."""
    update = executions.update_event(ex, step_id, steps=False)
    if step_id is not None:
        update["gate"] = ex.gate
    response = {**response, "execution": jsonable(update), "stats": executions.stats_of(ex)}
    decision.response = response if idempotency_key else None
    return response


def _apply(
    uow: UnitOfWork,
    ex: Execution,
    defn: WorkflowDef,
    step,
    sug: Suggestion,
    kind: str,
    effect: D.StepEffect,
    operator: str,
    now,
    tools: ToolRegistry,
    workspace_id: str,
    feedback: str,
) -> None:
    """Persist what core.coaching.decisions says a decision does to a step (at once, or when a held one is
    released: services.decisions.undo)."""
    changes: dict[str, Any] = {"decision": kind}
    if effect.status is not None:
        changes["status"] = effect.status
    if effect.params is not None or kind in ("accept", "correct", "manual"):
        changes["params"] = effect.params
    if effect.output is not None or kind == "manual":
        changes["output"] = effect.output
    if effect.error is not None:
        changes["error"] = effect.error
    if effect.finished:
        changes["finished_at"] = now
    executions.set_step(ex, sug.step_id, **changes)
    if effect.record_correction:
        corrections.record(uow, workspace_id, ex.workflow_id, sug.step_id, sug.params, effect.params, actor=operator)
    if effect.failure is not None:
        ex.error = {"step_id": step.id, "message": effect.failure}
    executions.set_status(ex, effect.trigger)
    if effect.ask_correction:
        coaching.open_suggestion(
            uow,
            ex,
            defn,
            step,
            "correction",
            tools,
            params=sug.params,
            rationale=f"Rejected: {feedback}. Correct it, do it by hand, or skip it.",
        )


def submit(
    services,
    workspace_id: str,
    execution_id: str,
    body: dict[str, Any],
    operator: str,
    idempotency_key: str | None = None,
    undo_window_s: float | None = None,
) -> dict[str, Any]:
    """The one way in for a decision, from REST or from the socket: apply, commit, push, go on. A transient error (a
    deadlock, SQLite's busy database) goes to the caller's one retry layer (services.db.retrying: every REST route
    in api/app.py, the socket's decision event in api/sockets.py), which calls this again from the start."""
    suggestion_id = str(body.get("suggestion_id") or "")
    for tries_left in range(RACES, -1, -1):
        try:
            return _submit(
                services,
                workspace_id,
                execution_id,
                body,
                operator,
                idempotency_key,
                services.settings.undo_window_s if undo_window_s is None else undo_window_s,
            )
        except IntegrityError:
            # a unique key lost a race: the suggestion's decision (or the Idempotency-Key) with a concurrent one, or
            # something else that a new try will find done (then this decision goes through)
            with services.db.read() as session:  # (what the winner committed)
                earlier = replay(session, workspace_id, idempotency_key, suggestion_id, execution_id)
                decided = earlier is None and session.get(Decision, suggestion_id) is not None
            if earlier is not None:
                return earlier
            if decided or not tries_left:
                raise Conflict(
                    "this suggestion was decided by a concurrent request",
                    details={"suggestion_id": body.get("suggestion_id")},
                ) from None
    raise AssertionError("not reached: the last try (tries_left 0) returns or raises")


RACES = 2  # new tries of a decision whose transaction lost a unique-key race although its suggestion was not decided


def _submit(
    services,
    workspace_id: str,
    execution_id: str,
    body: dict[str, Any],
    operator: str,
    idempotency_key: str | None,
    undo_window_s: float,
) -> dict[str, Any]:
    try:
        with services.command() as uow:
            session = uow.session
            # a replay of an Idempotency-Key is found by decide, under the execution's lock
            response, decision = decide(
                uow,
                services.definitions,
                services.tools.for_workspace(workspace_id),
                workspace_id,
                execution_id,
                body,
                operator,
                idempotency_key,
                undo_window_s,
            )
            notification_outbox.person_present(session)  # the next suggestion is in front of its operator
            ex = session.get(Execution, execution_id)
            decided_step: str | None = decision.step_id
            if ex.status in S.RUNNABLE:
                # go on in the same transaction up to the next gate; a slow tool goes to the runner
                if services.runner.drive(uow, ex, claim=False):
                    uow.run_next(execution_id)
                decided_step = None  # the answer says where the execution stopped, and counts the next suggestion
            response = answer(response, decision, ex, decided_step, idempotency_key)
    except Replayed as replayed:  # nothing was committed, sent or scheduled
        return replayed.response
    return response
